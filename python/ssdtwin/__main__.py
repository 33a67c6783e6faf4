"""``python -m ssdtwin sweep GRID [--backend local|ray|serial] [--address A] [--max-workers N] [--out FILE]``:
a parameter sweep from a grid file (what ``ssdtwin sweep`` runs)."""

import sys


def main() -> int:
    """Dispatch ``python -m ssdtwin COMMAND``."""
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help") or args[0] != "sweep":
        print(__doc__.strip())
        return 0 if args and args[0] in ("-h", "--help") else 2
    from ._sweep import _main

    return _main(args[1:])


if __name__ == "__main__":
    raise SystemExit(main())
