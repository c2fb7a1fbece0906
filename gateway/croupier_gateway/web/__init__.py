"""The web client's static files (HTML, CSS and ES modules, no build step): see docs/web.md."""

from pathlib import Path

WEB_DIR = Path(__file__).parent / "static"
