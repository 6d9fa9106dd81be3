" Vim syntax file
" Language:    nvFuser Host IR (%HostIrContainer text, hir toolchain)
" Maintainer:  hir (editors/vim/syntax/hir.vim); the same classes as
"              editors/textmate/hir.tmLanguage.json, checked by editors/check-grammar.py
if exists("b:current_syntax")
  finish
endif

" Later :syn match items win over earlier ones at the same position, so the generic ones come
" first and the specific ones last.
syn match hirPunctuation  "[(){}\[\],:;.]"
syn match hirOperator     "==\|!=\|<=\|>=\|&&\|||\|->\|<<\|>>\|[-+*/%<>=!&|^~?]"
syn match hirIdentifier   "\<[A-Za-z_][A-Za-z0-9_.]*\>"
syn match hirNumber       "\<[0-9]\+\(\.[0-9]\+\)\=\([eE][-+]\=[0-9]\+\)\=[fL]\=\>"
syn match hirNumber       "\<0x[0-9a-fA-F]\+\>"
syn match hirScalar       "\<\(i[0-9]\+\|rank\|numberOfStreams\|streamIdx\|deviceIdx\.[xyz]\)\>"
syn match hirAttribute    "\<[a-z_][a-z_0-9]*\ze\s*=[^=]"
syn keyword hirBoolean    true false
syn keyword hirStatement  ALLOCATE Communication P2PCommunication CpAsync CpAsyncBulk
syn keyword hirStatement  CpAsyncBulkTensorTile Deallocate EndCoalescing GetCurrentStream
syn keyword hirStatement  HirAliasSelect LaunchKernel LdMatrix LdTMem PostOnStream SegmenterSet
syn keyword hirStatement  Set SetCurrentStream ShardByStream ShareMemHandles StMatrix StTMem
syn keyword hirStatement  StartCoalescing SymmetricContiguousView Synchronize Wait Stream
syn keyword hirStatement  HostUnit Inputs Outputs broadcast linear matmul reduction select
syn keyword hirStatement  slice squeeze view
syn keyword hirControl    FOR IF ELSE in Manual into to from
syn match hirIterDomain   "\<[a-z]\+[A-Za-z.]\{-}[0-9]\+{[^{}]*}" contains=hirExtent
syn match hirExtent       "{[^{}]*}" contained
syn match hirTensor       "\<T[0-9]\+_[a-z]*_[A-Za-z0-9_]\+\>"
syn match hirMesh         "\<DeviceMesh{[0-9 {}]*}"
syn match hirTrailer      "^Index definitions:"
syn match hirContainer    "%HostIrContainer\>"
syn match hirComment      "//.*$"

hi def link hirComment     Comment
hi def link hirContainer   PreProc
hi def link hirTrailer     PreProc
hi def link hirMesh        Type
hi def link hirTensor      Identifier
hi def link hirIterDomain  Special
hi def link hirExtent      Number
hi def link hirControl     Conditional
hi def link hirStatement   Statement
hi def link hirBoolean     Boolean
hi def link hirAttribute   Label
hi def link hirScalar      Identifier
hi def link hirNumber      Number
hi def link hirIdentifier  Normal
hi def link hirOperator    Operator
hi def link hirPunctuation Delimiter

let b:current_syntax = "hir"
