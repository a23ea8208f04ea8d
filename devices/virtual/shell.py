"""A small POSIX-ish shell: parses what adb clients send and runs the commands phones answer.

Supported syntax: words with '…', "…" and backslash quoting; ``$?``, ``$VAR``, ``${VAR}``;
``;``, ``&&``, ``||``, ``|``; redirects ``>``, ``>>``, ``<``, ``2>``, ``2>&1``, ``&>``.
The commands themselves live in ``commands.py``; this module only knows about syntax and
plumbing, so it can be tested without a screen.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from devices.virtual.fs import FsError, MemoryFS, normalize

OPERATORS = ("&&", "||", ";", "|", "\n")


class ShellSyntaxError(Exception):
    pass


@dataclass
class Word:
    """A word as a list of parts: literal text, or ("var", name) expanded at run time."""

    parts: list = field(default_factory=list)

    def add(self, text: str) -> None:
        if self.parts and isinstance(self.parts[-1], str):
            self.parts[-1] += text
        else:
            self.parts.append(text)

    def expand(self, env: dict[str, str]) -> str:
        return "".join(p if isinstance(p, str) else env.get(p[1], "") for p in self.parts)


@dataclass
class Redirect:
    fd: int  # 1 stdout, 2 stderr, 0 stdin, -1 both
    mode: str  # ">", ">>", "<", ">&"
    target: Word | int


@dataclass
class Command:
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)


def _read_var(text: str, i: int, word: Word) -> int:
    """text[i] == '$'; add the variable part, return the index after it."""
    if i + 1 < len(text) and text[i + 1] in "?#$!0123456789":
        word.parts.append(("var", text[i + 1]))
        return i + 2
    if i + 1 < len(text) and text[i + 1] == "{":
        end = text.find("}", i + 2)
        if end == -1:
            raise ShellSyntaxError("bad substitution")
        word.parts.append(("var", text[i + 2 : end]))
        return end + 1
    j = i + 1
    while j < len(text) and (text[j].isalnum() or text[j] == "_"):
        j += 1
    if j == i + 1:
        word.add("$")
        return j
    word.parts.append(("var", text[i + 1 : j]))
    return j


def tokenize(text: str) -> list[Word | str]:
    """Words (``Word``) and operators/redirect symbols (``str``)."""
    tokens: list[Word | str] = []
    word: Word | None = None
    i = 0
    n = len(text)

    def finish():
        nonlocal word
        if word is not None:
            tokens.append(word)
            word = None

    while i < n:
        c = text[i]
        if c in " \t\r":
            finish()
            i += 1
        elif c == "#" and word is None:
            end = text.find("\n", i)
            i = n if end == -1 else end
        elif c == "'":
            end = text.find("'", i + 1)
            if end == -1:
                raise ShellSyntaxError("unterminated quoted string")
            word = word or Word()
            word.add(text[i + 1 : end])
            i = end + 1
        elif c == '"':
            word = word or Word()
            i += 1
            while True:
                if i >= n:
                    raise ShellSyntaxError("unterminated quoted string")
                c = text[i]
                if c == '"':
                    i += 1
                    break
                if c == "\\" and i + 1 < n and text[i + 1] in '"\\$`\n':
                    word.add(text[i + 1])
                    i += 2
                elif c == "$":
                    i = _read_var(text, i, word)
                else:
                    word.add(c)
                    i += 1
        elif c == "\\":
            word = word or Word()
            if i + 1 < n and text[i + 1] != "\n":
                word.add(text[i + 1])
            i += 2
        elif c == "$":
            word = word or Word()
            i = _read_var(text, i, word)
        elif text.startswith(("&&", "||"), i):
            finish()
            tokens.append(text[i : i + 2])
            i += 2
        elif c in ";|\n":
            finish()
            tokens.append(c)
            i += 1
        elif c in "<>&" or (c in "12" and word is None and text.startswith((">", ">>"), i + 1)):
            # A redirect: [n]> [n]>> < 2>&1 &>
            finish()
            for symbol in ("2>&1", "1>&2", ">&2", "&>>", "&>", "2>>", "1>>", ">>", "2>", "1>"):
                if text.startswith(symbol, i):
                    tokens.append(symbol)
                    i += len(symbol)
                    break
            else:
                if c == "&":
                    raise ShellSyntaxError("background jobs are not supported")
                tokens.append(c)
                i += 1
        else:
            word = word or Word()
            word.add(c)
            i += 1
    finish()
    return tokens


def parse(text: str) -> list[tuple[str, list[Command]]]:
    """A list of (connector, pipeline): connector is ";" "&&" or "||" before the pipeline."""
    tokens = tokenize(text)
    result: list[tuple[str, list[Command]]] = []
    connector = ";"
    pipeline: list[Command] = []
    command = Command()
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if isinstance(token, Word):
            command.words.append(token)
        elif token in ("2>&1", "1>&2", ">&2"):
            command.redirects.append(
                Redirect(2 if token == "2>&1" else 1, ">&", 1 if token == "2>&1" else 2)
            )
        elif token in (">", ">>", "<", "1>", "1>>", "2>", "2>>", "&>", "&>>"):
            i += 1
            if i >= len(tokens) or not isinstance(tokens[i], Word):
                raise ShellSyntaxError(f"syntax error: bad redirect near '{token}'")
            fd = 2 if token.startswith("2") else (-1 if token.startswith("&") else 1)
            if token == "<":
                fd = 0
            mode = ">>" if token.endswith(">>") else token[-1]
            command.redirects.append(Redirect(fd, mode, tokens[i]))
        elif token == "|":
            if not command.words:
                raise ShellSyntaxError("syntax error: unexpected '|'")
            pipeline.append(command)
            command = Command()
        else:  # ; && || newline
            if command.words or command.redirects:
                pipeline.append(command)
            elif pipeline or token in ("&&", "||"):
                raise ShellSyntaxError(f"syntax error: unexpected '{token}'")
            if pipeline:
                result.append((connector, pipeline))
            connector = ";" if token == "\n" else token
            pipeline, command = [], Command()
        i += 1
    if command.words or command.redirects:
        pipeline.append(command)
    elif pipeline:
        raise ShellSyntaxError("syntax error: unexpected end of file")
    if pipeline:
        result.append((connector, pipeline))
    return result


@dataclass
class Result:
    stdout: bytes = b""
    stderr: bytes = b""
    code: int = 0
    output: bytes = b""  # stdout and stderr interleaved command by command, as on one pty


CommandFn = Callable[["Shell", list[str], bytes], Awaitable[Result]]


class Shell:
    """Runs parsed command lines against a command table and a filesystem."""

    def __init__(self, fs: MemoryFS, commands: dict[str, CommandFn], env: dict[str, str]):
        self.fs = fs
        self.commands = commands
        self.env = {"?": "0", **env}
        self.cwd = "/"

    async def run(self, text: str) -> Result:
        """Run a whole command line; stdout/stderr accumulate in order, like ``sh -c``."""
        out = Result()
        try:
            program = parse(text)
        except ShellSyntaxError as exc:
            message = f"/system/bin/sh: {exc}\n".encode()
            return Result(stderr=message, code=2, output=message)
        for connector, pipeline in program:
            last = int(self.env["?"])
            if connector == "&&" and last != 0 or connector == "||" and last == 0:
                continue
            result = await self.run_pipeline(pipeline)
            out.stdout += result.stdout
            out.stderr += result.stderr
            out.output += result.stdout + result.stderr
            self.env["?"] = str(result.code)
            if getattr(self, "exited", False):
                break
        out.code = int(self.env["?"])
        return out

    async def run_pipeline(self, pipeline: list[Command]) -> Result:
        stdin = b""
        stderr = b""
        result = Result()
        for index, command in enumerate(pipeline):
            result = await self.run_command(command, stdin)
            stderr += result.stderr
            if index < len(pipeline) - 1:
                stdin, result.stdout = result.stdout, b""
        result.stderr = stderr
        return result

    async def run_command(self, command: Command, stdin: bytes) -> Result:
        argv = [w.expand(self.env) for w in command.words]
        try:
            for redirect in command.redirects:
                if redirect.fd == 0:
                    stdin = self.fs.read(normalize(redirect.target.expand(self.env), self.cwd))
        except FsError as exc:
            return Result(stderr=f"/system/bin/sh: {exc.path}: {exc.reason}\n".encode(), code=1)
        if not argv:
            result = Result()
        elif "=" in argv[0] and argv[0].split("=", 1)[0].isidentifier() and len(argv) == 1:
            name, value = argv[0].split("=", 1)
            self.env[name] = value
            result = Result()
        else:
            fn = self.commands.get(argv[0].rsplit("/", 1)[-1] if "/" in argv[0] else argv[0])
            if fn is None:
                return self._redirect(
                    command,
                    Result(
                        stderr=f"/system/bin/sh: {argv[0]}: inaccessible or not found\n".encode(),
                        code=127,
                    ),
                )
            try:
                result = await fn(self, argv, stdin)
            except FsError as exc:
                result = Result(stderr=f"{argv[0]}: {exc.path}: {exc.reason}\n".encode(), code=1)
        return self._redirect(command, result)

    def _redirect(self, command: Command, result: Result) -> Result:
        for redirect in command.redirects:
            if redirect.fd == 0:
                continue
            if redirect.mode == ">&":
                if redirect.fd == 2:  # 2>&1
                    result.stdout, result.stderr = result.stdout + result.stderr, b""
                else:  # 1>&2
                    result.stderr, result.stdout = result.stderr + result.stdout, b""
                continue
            path = normalize(redirect.target.expand(self.env), self.cwd)
            if redirect.fd == -1:
                data, result.stdout, result.stderr = result.stdout + result.stderr, b"", b""
            elif redirect.fd == 2:
                data, result.stderr = result.stderr, b""
            else:
                data, result.stdout = result.stdout, b""
            try:
                self.fs.write(path, data, append=redirect.mode == ">>")
            except FsError as exc:
                result.stderr += f"/system/bin/sh: can't create {exc.path}: {exc.reason}\n".encode()
                result.code = 1
        return result
