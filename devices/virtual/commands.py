"""The commands a phone's shell answers, with the output formats adb clients parse.

Each command is ``async def cmd(shell, argv, stdin) -> Result``; ``shell.phone`` is the device
(see ``device.Phone``) for commands that touch the screen or the apps.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time

from devices.virtual.fs import FsError, normalize
from devices.virtual.keys import KEYCODES
from devices.virtual.packages import PackageError, read_archive
from devices.virtual.shell import Result, Shell
from devices.virtual.templates import LEVELS, NATURAL_LEVEL

COMMANDS: dict = {}


def command(*names):
    def register(fn):
        for name in names:
            COMMANDS[name] = fn
        return fn

    return register


def ok(text: str = "") -> Result:
    return Result(stdout=text.encode())


def err(text: str, code: int = 1) -> Result:
    return Result(stderr=text.encode(), code=code)


# --- plain shell utilities ------------------------------------------------------------------


@command("echo")
async def echo(sh: Shell, argv, stdin):
    args, newline = argv[1:], True
    while args and args[0] in ("-n", "-e", "-ne", "-en"):
        newline = newline and "n" not in args[0]
        args = args[1:]
    return ok(" ".join(args) + ("\n" if newline else ""))


@command("true", ":")
async def true(sh, argv, stdin):
    return Result()


@command("false")
async def false(sh, argv, stdin):
    return Result(code=1)


@command("exit")
async def exit_(sh, argv, stdin):
    sh.exited = True
    return Result(code=int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 0)


@command("sleep")
async def sleep(sh, argv, stdin):
    try:
        await asyncio.sleep(min(float(argv[1]), 30))
    except (IndexError, ValueError):
        return err("sleep: Need 1 argument\n")
    return Result()


@command("id")
async def id_(sh, argv, stdin):
    return ok("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log)\n")


@command("whoami")
async def whoami(sh, argv, stdin):
    return ok("shell\n")


@command("pwd")
async def pwd(sh, argv, stdin):
    return ok(sh.cwd + "\n")


@command("cd")
async def cd(sh, argv, stdin):
    target = normalize(argv[1] if len(argv) > 1 else "/", sh.cwd)
    if not sh.fs.is_dir(target):
        return err(f"/system/bin/sh: cd: {argv[1]}: No such file or directory\n", 2)
    sh.cwd = target
    return Result()


@command("date")
async def date(sh, argv, stdin):
    if len(argv) > 1 and argv[1] == "+%s":
        return ok(f"{int(time.time())}\n")
    return ok(time.strftime("%a %b %d %H:%M:%S %Z %Y") + "\n")


@command("uname")
async def uname(sh, argv, stdin):
    return ok(
        "Linux localhost 5.15.0-waypoint #1 SMP PREEMPT aarch64 Toybox\n"
        if "-a" in argv
        else "Linux\n"
    )


@command("cat")
async def cat(sh: Shell, argv, stdin):
    if len(argv) == 1:
        return Result(stdout=stdin)
    out, errors = b"", b""
    for path in argv[1:]:
        try:
            out += sh.fs.read(normalize(path, sh.cwd))
        except FsError as exc:
            errors += f"cat: {path}: {exc.reason}\n".encode()
    return Result(stdout=out, stderr=errors, code=1 if errors else 0)


@command("ls")
async def ls(sh: Shell, argv, stdin):
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-"))
    paths = [a for a in argv[1:] if not a.startswith("-")] or [sh.cwd]
    out, errors = [], []
    for path in paths:
        entry = sh.fs.stat(normalize(path, sh.cwd))
        if entry is None:
            errors.append(f"ls: {path}: No such file or directory\n")
            continue
        items = (
            sh.fs.listdir(normalize(path, sh.cwd))
            if entry.is_dir and "d" not in flags
            else [(path, entry)]
        )
        if "a" not in flags:
            items = [(n, e) for n, e in items if not n.startswith(".")]
        if len(paths) > 1 and entry.is_dir:
            out.append(f"{path}:\n")
        for name, child in items:
            if "l" in flags:
                kind = "d" if child.is_dir else "-"
                stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(child.mtime))
                out.append(f"{kind}rwxrwx--x 1 shell shell {child.size:>8} {stamp} {name}\n")
            else:
                out.append(f"{name}\n")
    return Result(
        stdout="".join(out).encode(), stderr="".join(errors).encode(), code=1 if errors else 0
    )


@command("rm")
async def rm(sh: Shell, argv, stdin):
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-"))
    errors = ""
    for path in (a for a in argv[1:] if not a.startswith("-")):
        try:
            sh.fs.remove(normalize(path, sh.cwd), recursive="r" in flags or "R" in flags)
        except FsError as exc:
            if not ("f" in flags and exc.reason == "No such file or directory"):
                errors += f"rm: {path}: {exc.reason}\n"
    return err(errors) if errors else Result()


@command("mkdir")
async def mkdir(sh: Shell, argv, stdin):
    parents = "-p" in argv
    errors = ""
    for path in (a for a in argv[1:] if not a.startswith("-")):
        try:
            sh.fs.mkdir(normalize(path, sh.cwd), parents=parents)
        except FsError as exc:
            errors += f"mkdir: '{path}': {exc.reason}\n"
    return err(errors) if errors else Result()


@command("touch")
async def touch(sh: Shell, argv, stdin):
    for path in argv[1:]:
        real = normalize(path, sh.cwd)
        if not sh.fs.exists(real):
            sh.fs.write(real, b"")
        else:
            sh.fs.stat(real).mtime = int(time.time())
    return Result()


@command("grep")
async def grep(sh: Shell, argv, stdin):
    args = [a for a in argv[1:] if not a.startswith("-")]
    if not args:
        return err("usage: grep [-iv] PATTERN [FILE...]\n", 2)
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-"))
    pattern = re.compile(args[0], re.I if "i" in flags else 0)
    data = b"".join(sh.fs.read(normalize(f, sh.cwd)) for f in args[1:]) if args[1:] else stdin
    lines = [
        line for line in data.decode(errors="replace").splitlines(True)
        if bool(pattern.search(line)) != ("v" in flags)
    ]  # fmt: skip
    return Result(stdout="".join(lines).encode(), code=0 if lines else 1)


@command("getprop")
async def getprop(sh: Shell, argv, stdin):
    props = sh.phone.properties
    if len(argv) > 1:
        return ok(props.get(argv[1], argv[2] if len(argv) > 2 else "") + "\n")
    return ok("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))


@command("settings")
async def settings_(sh: Shell, argv, stdin):
    if len(argv) >= 4 and argv[1] == "get":
        return ok(sh.phone.settings.get(f"{argv[2]}/{argv[3]}", "null") + "\n")
    if len(argv) >= 5 and argv[1] == "put":
        sh.phone.settings[f"{argv[2]}/{argv[3]}"] = argv[4]
        return Result()
    return err("usage: settings [--user <USER_ID> | current] get namespace key\n", 255)


# --- window manager, dumpsys ----------------------------------------------------------------


@command("wm")
async def wm(sh: Shell, argv, stdin):
    phone = sh.phone
    if argv[1:2] == ["size"]:
        return ok(f"Physical size: {phone.width}x{phone.height}\n")
    if argv[1:2] == ["density"]:
        return ok(f"Physical density: {phone.density}\n")
    return err("Error: unknown command '" + " ".join(argv[1:]) + "'\n", 255)


@command("dumpsys")
async def dumpsys(sh: Shell, argv, stdin):
    phone = sh.phone
    service = argv[1] if len(argv) > 1 else ""
    w, h = phone.width, phone.height
    package, activity = phone.foreground()
    token = f"{abs(hash(package)) % 0xFFFFFFF:07x}"
    if service == "display":
        return ok(
            "DISPLAY MANAGER (dumpsys display)\n"
            "  mOnlyCore=false\n  mSafeMode=false\n  mPendingTraversal=false\n"
            "  mViewports=[DisplayViewport{type=INTERNAL, valid=true, isActive=true, "
            "displayId=0, uniqueId='local:0', physicalPort=0, orientation=0, "
            f"logicalFrame=Rect(0, 0 - {w}, {h}), "
            f"physicalFrame=Rect(0, 0 - {w}, {h}), deviceWidth={w}, deviceHeight={h}}}]\n"
            "  Display Devices: size=1\n"
            f'  DisplayDeviceInfo{{"Built-in Screen": uniqueId="local:0", {w} x {h}, '
            f"modeId 1, density {phone.density}, {phone.density}.0 x {phone.density}.0 dpi, "
            "rotation 0, type INTERNAL, state ON}\n"
        )
    if service == "window":
        ime = "Window{kbd u0 InputMethod}" if phone.keyboard_shown else "null"
        return ok(
            "WINDOW MANAGER WINDOWS (dumpsys window windows)\n"
            f"  Window #0 Window{{{token} u0 {package}/{activity}}}:\n"
            f"    mDisplayId=0 rootTaskId=1 mSession=Session{{1a2b3c 1234:u0a10100}}\n"
            f"  mCurrentFocus=Window{{{token} u0 {package}/{activity}}}\n"
            f"  mFocusedApp=ActivityRecord{{{token} u0 {package}/{activity} t12}}\n"
            f"  mInputMethodWindow={ime}\n"
        )
    if service == "activity":
        pid = phone.pid_of(package)
        return ok(
            "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n"
            "  Task id #12\n"
            f"    mResumedActivity: ActivityRecord{{{token} u0 {package}/{activity} t12}}\n"
            f"  ResumedActivity: ActivityRecord{{{token} u0 {package}/{activity} t12}}\n"
            "TASK 12:\n"
            f"  ACTIVITY {package}/{activity} {token} pid={pid}\n"
        )
    if service == "power":
        return ok(
            "POWER MANAGER (dumpsys power)\n  mWakefulness=Awake\n"
            "  mHoldingDisplaySuspendBlocker=true\n"
        )
    if service == "battery":
        return ok(
            "Current Battery Service state:\n  AC powered: false\n  USB powered: true\n"
            "  Wireless powered: false\n  Max charging current: 500000\n"
            "  Max charging voltage: 5000000\n"
            "  Charge counter: 2800000\n  status: 2\n  health: 2\n  present: true\n  level: 87\n"
            "  scale: 100\n  voltage: 4200\n  temperature: 250\n  technology: Li-ion\n"
        )
    if service == "input_method":
        return ok(f"  mInputShown={'true' if phone.keyboard_shown else 'false'}\n")
    if service == "package" and len(argv) > 2:
        app = phone.app(argv[2])
        if app is None:
            return ok("")
        return ok(
            f"Packages:\n  Package [{app.package}] (1a2b3c):\n"
            "    versionCode=1 minSdk=30 targetSdk=34\n"
            f"    versionName={app.version}\n    pkgFlags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ]\n"
            "    firstInstallTime=2025-01-01 00:00:00\n    lastUpdateTime=2025-01-01 00:00:00\n"
        )
    return ok("")


# --- screen: screencap, uiautomator ---------------------------------------------------------


@command("screencap")
async def screencap(sh: Shell, argv, stdin):
    args = [a for a in argv[1:] if not a.startswith("-")]
    if "-d" in argv:
        index = argv.index("-d")
        args = [a for a in args if a != (argv[index + 1] if index + 1 < len(argv) else None)]
    png = await sh.phone.screencap_png()
    if args:  # screencap [-p] FILE (PNG when the name ends in .png or -p was given)
        sh.fs.write(normalize(args[0], sh.cwd), png)
        return Result()
    if "-p" not in argv:
        return Result(stdout=await sh.phone.screencap_raw())
    return Result(stdout=png)


@command("uiautomator")
async def uiautomator(sh: Shell, argv, stdin):
    if len(argv) < 2 or argv[1] != "dump":
        return err("Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\n"
                   "dump: creates an XML dump of current UI hierarchy\n", 1)  # fmt: skip
    args = [a for a in argv[2:] if not a.startswith("--")]
    target = args[0] if args else "/sdcard/window_dump.xml"
    if target == "/dev/tty":
        target = None
    xml = await sh.phone.dump_hierarchy()
    if xml is None:
        # What a phone prints when the UI never becomes idle (animations running).
        return Result(stdout=b"ERROR: could not get idle state.\n", code=1)
    if target is None:
        return ok(xml + "UI hierchary dumped to: /dev/tty\n")
    real = normalize(target, sh.cwd)
    try:
        sh.fs.write(real, xml.encode())
    except FsError:
        return Result(stdout=f"ERROR: could not write to {target}\n".encode(), code=1)
    return ok(f"UI hierchary dumped to: {target}\n")


# --- input ----------------------------------------------------------------------------------

INPUT_USAGE = (
    "Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n\n"
    "The commands and default sources are:\n"
    "      text <string> (Default: keyboard)\n"
    "      keyevent [--longpress|--doubletap] <key code number or name> ...\n"
    "      tap <x> <y> (Default: touchscreen)\n      swipe <x1> <y1> <x2> <y2> [duration(ms)]\n"
    "      draganddrop <x1> <y1> <x2> <y2> [duration(ms)]\n"
)
INPUT_SOURCES = {
    "keyboard",
    "touchscreen",
    "touchpad",
    "mouse",
    "dpad",
    "gamepad",
    "stylus",
    "trackball",
}


def _ints(values: list[str], count: int) -> list[int] | None:
    try:
        return [int(float(v)) for v in values[:count]] if len(values) >= count else None
    except ValueError:
        return None


@command("input")
async def input_(sh: Shell, argv, stdin):
    args = argv[1:]
    if args and args[0] in INPUT_SOURCES:
        args = args[1:]
    if args[:1] == ["-d"]:
        args = args[2:]
    if not args:
        return err(INPUT_USAGE)
    verb, rest = args[0], args[1:]
    phone = sh.phone
    if verb == "tap":
        point = _ints(rest, 2)
        if point is None:
            return err(INPUT_USAGE)
        await phone.tap(*point)
    elif verb in ("swipe", "draganddrop"):
        points = _ints(rest, 4)
        if points is None:
            return err(INPUT_USAGE)
        duration = _ints(rest[4:], 1)
        ms = duration[0] if duration else 300
        if verb == "swipe":
            await phone.swipe(*points, ms)
        else:
            await phone.drag(*points, ms)
    elif verb == "text":
        if not rest:
            return err(INPUT_USAGE)
        # Like Input.java: "%s" stands for a space (adb shells used to split on spaces).
        await phone.type_text(" ".join(rest).replace("%s", " "))
    elif verb == "keyevent":
        long_press = "--longpress" in rest
        for key in (r for r in rest if not r.startswith("--")):
            code = (
                KEYCODES.get(key.upper().removeprefix("KEYCODE_"))
                if not key.isdigit()
                else int(key)
            )
            if code is None:
                return err(f"Error: Unknown keycode {key}\n")
            await phone.keyevent(code, long_press=long_press)
    elif verb in ("roll", "press", "motionevent", "keycombination"):
        return Result()
    else:
        return err(f"Error: Unknown command: {verb}\n" + INPUT_USAGE)
    return Result()


# --- activity manager, package manager, monkey ----------------------------------------------


def _extras(args: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """(options such as -n/-a/-d, string extras) from an ``am`` argument list."""
    options, extras = {}, {}
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--es", "--ei", "--ez", "--el", "--ef") and i + 2 < len(args):
            extras[args[i + 1]] = args[i + 2]
            i += 3
        elif a in ("-n", "-a", "-d", "-c", "-t", "-f", "--user") and i + 1 < len(args):
            options[a] = args[i + 1]
            i += 2
        else:
            i += 1
    return options, extras


@command("am")
async def am(sh: Shell, argv, stdin):
    phone = sh.phone
    sub = argv[1] if len(argv) > 1 else ""
    options, extras = _extras(argv[2:])
    if sub in ("start", "start-activity"):
        component = options.get("-n")
        if component is None:
            return ok(f"Starting: Intent {{ act={options.get('-a', '')} }}\n"
                      "Error: Activity not started, unable to resolve Intent\n")  # fmt: skip
        package, _, activity = component.partition("/")
        app = phone.app(package)
        if app is None or (activity and not app.has_activity(activity)):
            return ok(f"Starting: Intent {{ cmp={component} }}\nError type 3\n"
                      f"Error: Activity class {{{component}}} does not exist.\n")  # fmt: skip
        await phone.start_app(package, extras)
        return ok(f"Starting: Intent {{ cmp={component} }}\n")
    if sub in ("force-stop", "kill"):
        if len(argv) > 2:
            await phone.force_stop(argv[-1])
        return Result()
    if sub == "broadcast":
        action = options.get("-a", "")
        if action == "ADB_INPUT_TEXT" and "msg" in extras:
            await phone.type_text(extras["msg"])
        elif action == "ADB_INPUT_B64" and "msg" in extras:
            try:
                await phone.type_text(base64.b64decode(extras["msg"]).decode())
            except (ValueError, UnicodeDecodeError):
                pass
        elif action == "ADB_CLEAR_TEXT":
            await phone.clear_text()
        return ok(f"Broadcasting: Intent {{ act={action} flg=0x400000 (has extras) }}\n"
                  "Broadcast completed: result=0\n")  # fmt: skip
    return err(f"Error: Unknown command: {sub}\n", 255)


@command("monkey")
async def monkey(sh: Shell, argv, stdin):
    options, _ = _extras(argv[1:])
    package = (
        argv[argv.index("-p") + 1] if "-p" in argv and argv.index("-p") + 1 < len(argv) else None
    )
    if package is None or sh.phone.app(package) is None:
        return Result(
            stdout=b"  bash arg: -p\n",
            stderr=b"** No activities found to run, monkey aborted.\n",
            code=252,
        )
    await sh.phone.start_app(package, {})
    return ok(f"  bash arg: -p\n  bash arg: {package}\n  bash arg: -c\n  bash arg: "
              f"android.intent.category.LAUNCHER\n  bash arg: 1\nargs: {argv[1:]}\n"
              "Events injected: 1\n## Network stats: elapsed time=12ms "
              "(0ms mobile, 0ms wifi, 12ms not connected)\n")  # fmt: skip


@command("pm")
async def pm(sh: Shell, argv, stdin):
    phone = sh.phone
    sub = argv[1] if len(argv) > 1 else ""
    if sub == "list" and argv[2:3] == ["packages"]:
        words = [a for a in argv[3:] if not a.startswith("-")]
        packages = [a.package for a in phone.installed_apps()]
        if "-3" not in argv:
            packages += phone.system_packages
        packages = [pkg for pkg in packages if not words or words[0] in pkg]
        return ok("".join(f"package:{pkg}\n" for pkg in sorted(packages)))
    if sub == "path" and len(argv) > 2:
        if phone.app(argv[2]) is None and argv[2] not in phone.system_packages:
            return Result(code=1)
        return ok(f"package:/data/app/{argv[2]}-1/base.apk\n")
    if sub == "clear" and len(argv) > 2:
        await phone.force_stop(argv[-1])
        return ok("Success\n")
    if sub == "install" and len(argv) > 2:
        return await _install(sh, argv[-1])
    if sub == "uninstall" and len(argv) > 2:
        if await phone.uninstall(argv[-1]):
            return ok("Success\n")
        return ok("Failure [DELETE_FAILED_INTERNAL_ERROR]\n")
    return err(f"Unknown command: {sub}\n", 255)


async def _install(sh: Shell, path: str) -> Result:
    """``pm install FILE.wpk``: an app package pushed to the device (``adb push``), installed as
    a phone installs an APK; the failure says why in pm's words."""
    try:
        data = sh.fs.read(normalize(path, sh.cwd))
    except FsError as exc:
        return ok(f"Failure [INSTALL_FAILED_INVALID_URI: {path}: {exc.reason}]\n")
    try:
        await sh.phone.install(read_archive(bytes(data)))
    except PackageError as exc:
        return ok(f"Failure [INSTALL_PARSE_FAILED_BAD_MANIFEST: {exc}]\n")
    return ok("Success\n")


@command("cmd")
async def cmd(sh: Shell, argv, stdin):
    if argv[1:2] == ["package"]:
        return await pm(sh, ["pm", *argv[2:]], stdin)
    if argv[1:2] == ["activity"]:
        return await am(sh, ["am", *argv[2:]], stdin)
    if argv[1:2] == ["input"]:
        return await input_(sh, ["input", *argv[2:]], stdin)
    return err(f"Can't find service: {argv[1] if len(argv) > 1 else ''}\n", 20)


# --- Waypoint's own: memory variables and tasks for verifiable labels -----------------------

WAYPOINT_USAGE = """usage: waypoint <command>
  visible-vars      JSON list of the declared memory variables visible on screen, with bounds
  tasks             JSON list of the tasks at this seed: each template's instance (instruction,
                    gold answer, grading rule, memory variables and memory type)
  vars              JSON list of every declared memory variable and its value
  route             JSON of the foreground app and its page (scores an exploration's
                    coverage; never given to an agent or an explorer)
  screen-version    a number that changes whenever the screen does (-1 while animating)
  task start <id>   open the answer page for a task
  grade <id> <answer>  print success or failure for an answer
  env               JSON of the seed and the apps that reproduce the apps' data
  reset [--seed N] [--level L]
                    close every app, dropping its state, and regenerate the apps' data from
                    seed N (default: the current seed), posing every task at difficulty level
                    L (1, 2 or 3; default 3, the task alone); prints what env prints
"""
MAX_SEED = 2**31 - 1


def parse_reset(args: list[str], current: int) -> tuple[int, int]:
    """The seed and level of ``waypoint reset [--seed N] [--level L]`` (the seed defaults to
    the current one, the level to 3); ValueError with the message to print."""
    given: dict[str, str] = {}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        name, equals, value = arg.partition("=")
        if name not in ("--seed", "--level") or name in given:
            raise ValueError(f"waypoint reset: unexpected arguments: {' '.join(args)}")
        if not equals:
            if not rest:
                raise ValueError(f"waypoint reset: unexpected arguments: {' '.join(args)}")
            value = rest.pop(0)
        given[name] = value
    seed = given.get("--seed", str(current))
    if not seed.isdigit() or int(seed) > MAX_SEED:
        raise ValueError(
            f"waypoint reset: --seed must be a whole number from 0 to {MAX_SEED}, got {seed!r}"
        )
    level = given.get("--level", str(NATURAL_LEVEL))
    if level not in {str(n) for n in LEVELS}:
        raise ValueError(
            f"waypoint reset: --level must be 1, 2 or 3 (STAMP's difficulty levels), got {level!r}"
        )
    return int(seed), int(level)


@command("waypoint")
async def waypoint(sh: Shell, argv, stdin):
    phone = sh.phone
    sub = argv[1] if len(argv) > 1 else ""
    if sub == "visible-vars":
        return ok(json.dumps(await phone.visible_vars(), ensure_ascii=False) + "\n")
    if sub == "route":
        return ok(json.dumps(await phone.route(), ensure_ascii=False) + "\n")
    if sub == "screen-version":  # equal before and after a capture: vars and capture match
        return ok(f"{await phone.screen.token()}\n")
    if sub == "tasks":
        return ok(json.dumps([t.to_dict() for t in phone.catalog.tasks], ensure_ascii=False) + "\n")
    if sub == "vars":
        return ok(
            json.dumps([v.to_dict() for v in phone.catalog.variables], ensure_ascii=False) + "\n"
        )
    if sub == "env":
        return ok(json.dumps(phone.environment(), ensure_ascii=False) + "\n")
    if sub == "reset":
        try:
            seed, level = parse_reset(argv[2:], phone.catalog.seed)
        except ValueError as exc:
            return err(f"{exc}\n", 2)
        await phone.reset(seed, level)
        return ok(json.dumps(phone.environment(), ensure_ascii=False) + "\n")
    if sub == "task" and argv[2:3] == ["start"] and len(argv) > 3:
        if phone.catalog.task(argv[3]) is None:
            return err(f"waypoint: no task {argv[3]}\n")
        await phone.start_app(phone.catalog.answer_package, {"task": argv[3]})
        return Result()
    if sub == "grade" and len(argv) > 3:
        task = phone.catalog.task(argv[2])
        if task is None:
            return err(f"waypoint: no task {argv[2]}\n")
        return ok(("success" if task.grade(" ".join(argv[3:])) else "failure") + "\n")
    return err(WAYPOINT_USAGE, 1)
