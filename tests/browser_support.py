"""Test-only: one headless Chromium screenshot of a local page, offline (every host name
resolves nowhere), and the marker that skips a test when no Chromium is installed
(``scripts/setup_browser.sh`` installs it; ``INDEXCHECK_REQUIRE_BROWSER`` turns the skip into
a failure, as CI sets it)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image


def browser() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


needs_browser = pytest.mark.skipif(
    browser() is None and not os.environ.get("INDEXCHECK_REQUIRE_BROWSER"),
    reason="chromium is not installed; run scripts/setup_browser.sh (apt-get install chromium)",
)


def screenshot(page: Path, size: tuple[int, int], tmp: Path) -> np.ndarray:
    """``page`` rendered in a ``size`` (width, height) window: RGB pixels, int32 (h, w, 3)."""
    assert browser() is not None, "INDEXCHECK_REQUIRE_BROWSER is set but chromium is absent"
    shot = tmp / f"{page.stem}.png"
    cmd = [
        str(browser()), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--hide-scrollbars", "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={tmp / 'profile'}", f"--screenshot={shot}",
        f"--window-size={size[0]},{size[1]}", page.resolve().as_uri(),
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert shot.is_file(), done.stderr[-2000:]
    img = np.asarray(Image.open(shot).convert("RGB"), dtype=np.int32)
    assert img.shape[:2] == (size[1], size[0])
    return img
