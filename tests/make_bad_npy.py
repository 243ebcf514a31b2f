#!/usr/bin/python3
"""make_bad_npy.py: .npy files good and bad for testdata/run, without numpy.

    /usr/bin/python3 tests/make_bad_npy.py DIR

Writes the files byte by byte (the format of numpy/lib/format.py), so the
golden cases need no numpy: ok.npy (2, 3) <f8 = 1..6 with a 1.0 header,
v2.npy and v3.npy the same with 2.0 and 3.0 headers, fortran.npy and
big.npy the same array in Fortran order and big-endian (converted as
np.load does), then one file per error aicm-run must name: an integer
dtype, truncated data, trailing data, another shape, f32 where f64 is
wanted, a file that is not .npy, an unknown version, a cut header.
"""
import os
import struct
import sys


def npy(path, descr, shape, data, fortran=False, major=1, minor=0):
    hdr = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False",
        "(%s)" % "".join("%d, " % d for d in shape)[:-2] if len(shape) != 1
        else "(%d,)" % shape[0])
    pre = 10 if major == 1 else 12
    hdr += " " * ((64 - (pre + len(hdr) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY" + bytes([major, minor]))
        f.write(struct.pack("<H" if major == 1 else "<I", len(hdr)))
        f.write(hdr.encode())
        f.write(data)


def main():
    d = sys.argv[1]
    six = struct.pack("<6d", 1, 2, 3, 4, 5, 6)
    npy(os.path.join(d, "ok.npy"), "<f8", (2, 3), six)
    npy(os.path.join(d, "v2.npy"), "<f8", (2, 3), six, major=2)
    npy(os.path.join(d, "v3.npy"), "<f8", (2, 3), six, major=3)
    # [[1, 2, 3], [4, 5, 6]] column by column
    npy(os.path.join(d, "fortran.npy"), "<f8", (2, 3), struct.pack("<6d", 1, 4, 2, 5, 3, 6),
        fortran=True)
    npy(os.path.join(d, "int.npy"), "<i4", (2, 3), struct.pack("<6i", 1, 2, 3, 4, 5, 6))
    npy(os.path.join(d, "big.npy"), ">f8", (2, 3), struct.pack(">6d", 1, 2, 3, 4, 5, 6))
    npy(os.path.join(d, "short.npy"), "<f8", (2, 3), six[:40])
    npy(os.path.join(d, "long.npy"), "<f8", (2, 3), six + b"\0" * 8)
    npy(os.path.join(d, "shape.npy"), "<f8", (3, 2), six)
    npy(os.path.join(d, "f32.npy"), "<f4", (2, 3), struct.pack("<6f", 1, 2, 3, 4, 5, 6))
    npy(os.path.join(d, "v9.npy"), "<f8", (2, 3), six, major=9)
    with open(os.path.join(d, "text.npy"), "w") as f:
        f.write("1 2 3\n4 5 6\n")
    with open(os.path.join(d, "cut.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00\x76\x00{'descr': '<f8', ")


if __name__ == "__main__":
    main()
