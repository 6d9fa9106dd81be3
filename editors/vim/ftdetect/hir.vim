" nvFuser Host IR (%HostIrContainer text) files
autocmd BufNewFile,BufRead *.hir setfiletype hir
