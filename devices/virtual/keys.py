"""Android key codes (android.view.KeyEvent) and how the virtual screen maps them to the page."""

KEYCODES = {
    "HOME": 3, "BACK": 4, "CALL": 5, "ENDCALL": 6,
    **{str(d): 7 + d for d in range(10)},
    "STAR": 17, "POUND": 18, "DPAD_UP": 19, "DPAD_DOWN": 20, "DPAD_LEFT": 21, "DPAD_RIGHT": 22,
    "DPAD_CENTER": 23, "VOLUME_UP": 24, "VOLUME_DOWN": 25, "POWER": 26, "CAMERA": 27, "CLEAR": 28,
    **{chr(ord("A") + i): 29 + i for i in range(26)},
    "COMMA": 55, "PERIOD": 56, "TAB": 61, "SPACE": 62, "ENTER": 66, "DEL": 67, "GRAVE": 68,
    "MINUS": 69, "EQUALS": 70, "LEFT_BRACKET": 71, "RIGHT_BRACKET": 72, "BACKSLASH": 73,
    "SEMICOLON": 74, "APOSTROPHE": 75, "SLASH": 76, "AT": 77, "PLUS": 81, "MENU": 82,
    "SEARCH": 84, "PAGE_UP": 92, "PAGE_DOWN": 93, "ESCAPE": 111, "FORWARD_DEL": 112,
    "MOVE_HOME": 122, "MOVE_END": 123, "VOLUME_MUTE": 164, "APP_SWITCH": 187, "SLEEP": 223,
    "WAKEUP": 224,
}  # fmt: skip

# Key codes the page receives as keyboard keys (Playwright key names).
PAGE_KEYS = {
    **{7 + d: str(d) for d in range(10)},
    **{29 + i: chr(ord("a") + i) for i in range(26)},
    17: "*", 18: "#", 19: "ArrowUp", 20: "ArrowDown", 21: "ArrowLeft", 22: "ArrowRight",
    23: "Enter", 55: ",", 56: ".", 61: "Tab", 62: " ", 66: "Enter", 67: "Backspace", 68: "`",
    69: "-", 70: "=", 71: "[", 72: "]", 73: "\\", 74: ";", 75: "'", 76: "/", 77: "@", 81: "+",
    92: "PageUp", 93: "PageDown", 111: "Escape", 112: "Delete", 122: "Home", 123: "End",
}  # fmt: skip

# Key codes the system handles itself.
HOME, BACK, APP_SWITCH = 3, 4, 187
NO_OP = {5, 6, 24, 25, 26, 27, 164, 223, 224, 82, 84, 28}
