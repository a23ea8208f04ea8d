"""Key press to visible effect in the annotation workspace, in Chromium:
`python bench/bench_workspace_keys.py`.

The 65-step trajectory of ``bench_workspace.py`` is served by a live Django server; Playwright
drives Debian's Chromium at 1440x900. Timed in the page, from the keydown to the first frame
painted after the new step is in the page:

- one `j` at a time (each waits for the last): median and p90 of 30;
- bursts of five `j` pressed at once: time until the fifth step shows, and that none is lost.

Target: a key press to its visible effect <= 100 ms median.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_workspace import labelled_trajectory, setup  # noqa: E402

TARGET_MS = 100
SINGLE = 30
BURSTS = 5

PROBE = """
() => {
  window.__lat = [];
  window.__t0 = 0;
  document.addEventListener("keydown", () => {
    if (!window.__t0) window.__t0 = performance.now();
  }, true);
  window.__until = -1;
  new MutationObserver(() => {
    const step = Number(document.getElementById("ws-main").dataset.step);
    if (window.__t0 && (window.__until < 0 || step === window.__until)) {
      const t0 = window.__t0;
      window.__t0 = 0;
      requestAnimationFrame(() => window.__lat.push(performance.now() - t0));
    }
  }).observe(document.getElementById("ws"), { childList: true, subtree: true });
}
"""


def main() -> None:
    setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.test import Client
    from django.test.testcases import LiveServerThread
    from playwright.sync_api import sync_playwright

    from core.chromium import CHROMIUM_ARGS
    from trajectories.services import do_create_project

    if not settings.CHROMIUM_PATH:
        sys.exit("no Chromium: set CHROMIUM_PATH (make install provisions one)")
    user = get_user_model().objects.create_user("bench")
    project = do_create_project("Bench", user)
    t = labelled_trajectory(project, user, 65, 2)
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value

    server = LiveServerThread("localhost", StaticFilesHandler, port=0)
    server.daemon = True
    server.start()
    server.is_ready.wait()
    base = f"http://localhost:{server.port}"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=settings.CHROMIUM_PATH, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            context.add_cookies(
                [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": base}]
            )
            page = context.new_page()
            page.goto(f"{base}/trajectories/{t.pk}/workspace/?step=0")
            page.evaluate(PROBE)
            for i in range(1, SINGLE + 1):
                page.keyboard.press("j")
                page.wait_for_function(f"window.__lat.length === {i}")
            single = page.evaluate("window.__lat")
            page.evaluate("window.__lat = []")
            lost = 0
            for b in range(BURSTS):
                here = int(page.get_attribute("#ws-main", "data-step"))
                page.evaluate(f"window.__until = {here + 5}")
                for _ in range(5):
                    page.keyboard.press("j")
                page.wait_for_function(f"window.__lat.length === {b + 1}")
                page.wait_for_timeout(200)
                lost += here + 5 - int(page.get_attribute("#ws-main", "data-step"))
            bursts = page.evaluate("window.__lat")
            browser.close()
    finally:
        server.terminate()

    median = statistics.median(single)
    p90 = sorted(single)[int(len(single) * 0.9) - 1]
    print("workspace keys, 65 steps, Chromium 1440x900, live Django server (no network)")
    print(
        f"  j -> next step visible   median {median:6.1f} ms, p90 {p90:6.1f} ms  "
        f"(target <= {TARGET_MS})"
    )
    print(
        f"  5 x j at once -> 5th step visible  median {statistics.median(bursts):6.1f} ms; "
        f"key presses lost: {lost}"
    )
    ok = median <= TARGET_MS and lost == 0
    print("  OK" if ok else "  MISSED A TARGET")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
