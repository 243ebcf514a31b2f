" aicm text IR: *.aicm files (graph IR and tile IR, docs/ir.md, docs/tiled.md)
autocmd BufNewFile,BufRead *.aicm setfiletype aicm
