"""Reading Oracle redo logs: file headers, blocks, records, change vectors and opcodes."""
