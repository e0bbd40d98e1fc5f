# Compile-time constants shared by the native modules (each .pyx includes this file: a DEF is
# per compilation unit and cannot be cimported). Only DEFs: the code lives in the modules.

DEF ENTRY_SIZE = 40
DEF KIND_PAIR = 1

DEF IRP = 2
DEF DRP = 3
DEF LKR = 4
DEF URP = 5
DEF ORP = 6
DEF CFA = 8
DEF QMI = 11
DEF QMD = 12

DEF FB_N = 0x01
DEF FB_P = 0x02
DEF FB_L = 0x04
DEF FB_F = 0x08
DEF FB_K = 0x80

DEF OPC_IRP = 0x0B02
DEF OPC_DRP = 0x0B03
DEF OPC_LKR = 0x0B04
DEF OPC_URP = 0x0B05
DEF OPC_ORP = 0x0B06
DEF OPC_CFA = 0x0B08
DEF OPC_QMI = 0x0B0B
DEF OPC_QMD = 0x0B0C
DEF OPC_SUPP = 0x0B10
DEF OPC_CMP = 0x0B16

# The row operations OP_* and the value states ABSENT, NULLV are enums of values/_buf.pxd (the
# renderers in replicator.formats read them too).

# Column render kinds.
DEF K_SKIP = 0
DEF K_PY = 1
DEF K_NUMBER = 2
DEF K_HEX = 3
DEF K_STR = 4
DEF K_TS = 5
DEF K_TSTZ = 6
DEF K_IYM = 7
DEF K_IDS = 8
DEF K_BFLOAT = 9
DEF K_BDOUBLE = 10

# The cells of the typed row images (CK_*, CELL_MODIFIED) are enums of formats/_rowvalues.pxd.

# Redo framing: block and record headers, record vld flags (the record loops).
DEF BLOCK_HEADER = 16
DEF RECORD_HEADER = 24
DEF LWN_RECORD_HEADER = 68
DEF VLD_DATA = 0x01
DEF VLD_LWN = 0x04
