"""A PEP 517 build backend in a few lines: the wheel of `crmatrix-fake-tool`, holding
`fake_search.py` and its console script `fake-search`, at the version in the file VERSION.
It needs no setuptools and no wheel package, so pip builds it with nothing to download."""

import base64
import hashlib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
DIST = "crmatrix_fake_tool"


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = (ROOT / "VERSION").read_text().strip()
    info = f"{DIST}-{version}.dist-info"
    files = {
        "fake_search.py": (ROOT / "fake_search.py").read_bytes(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: crmatrix-fake-tool\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: crmatrix-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": b"[console_scripts]\nfake-search = fake_search:cli\n",
    }
    record = [f"{path},sha256={_digest(data)},{len(data)}" for path, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    name = f"{DIST}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / name, "w") as whl:
        for path, data in files.items():
            whl.writestr(path, data)
    return name
