"""A driver program for log tests: ``print_lines.py N`` prints N numbered lines, each with
characters of two and three bytes in UTF-8, and exits 0."""

import sys

sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[attr-defined]
for number in range(int(sys.argv[1])):
    print(f"line {number} é€ {'x' * (number % 80)}")
sys.stdout.flush()
