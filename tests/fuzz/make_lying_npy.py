#!/usr/bin/python3
"""make_lying_npy.py DIR: .npy files whose headers lie about their data.

Used by testdata/bad/npy-lies.aicm (the reader must refuse each one, naming
the file and the lie, before it allocates anything).  Each file is built by
hand, byte by byte, so that the lie is exactly the one named; numpy writes
only honest files.  testdata/run/npy-errors.aicm covers the plainer cases
(wrong dtype, order, version, truncated data or header).
"""
import struct
import sys


def npy(path, header, data=b"", major=1, pad=True, raw_len=None):
    h = header.encode("latin1" if major < 3 else "utf-8")
    pre = 10 if major == 1 else 12
    if pad:
        h += b" " * ((64 - (pre + len(h) + 1) % 64) % 64) + b"\n"
    n = len(h) if raw_len is None else raw_len
    ln = struct.pack("<H", n) if major == 1 else struct.pack("<I", n)
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY" + bytes([major, 0]) + ln + h + data)


def main(d):
    six = struct.pack("<6d", *range(6))
    d8 = "{'descr': '<f8', 'fortran_order': False, 'shape': %s, }"
    # The shape's element count overflows 64 bits.
    npy(d + "/overflow.npy", d8 % "(4294967296, 4294967296, 4294967296)", six)
    # A shape of a terabyte over six doubles of data.
    npy(d + "/terabyte.npy", d8 % "(131072, 1048576)", six)
    # Five dimensions: past aicm's rank limit.
    npy(d + "/rank9.npy", d8 % "(1, 1, 1, 1, 1, 1, 2, 1, 3)", six)
    # A negative dimension.
    npy(d + "/negative.npy", d8 % "(-2, 3)", six)
    # The data is not a whole number of elements.
    npy(d + "/ragged.npy", d8 % "(2, 3)", six + b"\x01\x02\x03")
    # The header length field points past the end of the file.
    npy(d + "/hlen.npy", d8 % "(2, 3)", b"", major=2, pad=False, raw_len=1 << 19)
    # The header length field is larger than any header aicm reads.
    npy(d + "/hlen-huge.npy", d8 % "(2, 3)", b"", major=2, pad=False, raw_len=0xFFFFFFFF)
    # No 'shape' key at all.
    npy(d + "/noshape.npy", "{'descr': '<f8', 'fortran_order': False, }", six)
    # The shape is not a tuple.
    npy(d + "/shape-int.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': 6, }", six)
    # The dict is never closed.
    npy(d + "/open-dict.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), ", six)
    # fortran_order is neither True nor False.
    npy(d + "/order-word.npy", "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2, 3), }", six)
    # Half-precision floats.
    npy(d + "/f2.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }", six[:12])
    # The shape says 2x3 but the data holds a 3x3's worth.
    npy(d + "/nine.npy", d8 % "(2, 3)", struct.pack("<9d", *range(9)))
    # The header length is zero.
    npy(d + "/hlen-zero.npy", "", six, pad=False, raw_len=0)


main(sys.argv[1])
