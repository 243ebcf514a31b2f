" Vim syntax file
" Language:    aicm text IR (graph IR and tile IR; docs/ir.md, docs/tiled.md)
" Filenames:   *.aicm
" Install:     see docs/editors/README.md
"
" Values (%x), symbols (@kernel0), op names, keywords, kernel kinds,
" attribute names, numbers, element types and the test directives of the
" golden files (// RUN:, // CHECK:, // expected-error@+1 {{...}}).

if exists("b:current_syntax")
  finish
endif

let s:cpo_save = &cpo
set cpo&vim

syn case match

" Comments, with the directives that golden tests and --verify-diagnostics read.
syn keyword aicmTodo         contained TODO FIXME XXX NOTE
syn match   aicmDirective    contained "\<RUN:"
syn match   aicmDirective    contained "\<CHECK\(-[A-Z]\+\)\?:"
syn match   aicmDirective    contained "\<expected-\(error\|warning\|note\|remark\)\(@[-+]\?\d*\)\?"
syn match   aicmDirective    contained "{{.\{-}}}"
syn match   aicmComment      "//.*$" contains=aicmTodo,aicmDirective
" after aicmComment, so that it wins on the split line
syn match   aicmSplit        "^// -----$"

" Structure.
syn keyword aicmKeyword      graph kernel tiled return for to step iter yield
syn keyword aicmKeyword      load store atomic_add atomic_max masked other
syn keyword aicmKeyword      load_pad load_step load_gather
syn keyword aicmType         f32 f64 i32 i64 bool

" Graph ops (src/ir/ops.def) and tile ops (src/ir/tile_ops.def); tests/opnames.sh
" checks that every op of the tables is here.
syn keyword aicmOp           input const
syn keyword aicmOp           relu neg exp log sqrt tanh sigmoid abs erf reciprocal sin
syn keyword aicmOp           cos floor ceil round sign isnan not cast pow mod fmod equal less less_equal greater greater_equal
syn keyword aicmOp           and or xor where min prod argmax argmin concat slice pad gather expand conv2d max_pool2d avg_pool2d
syn keyword aicmOp           add sub mul div maximum minimum
syn keyword aicmOp           sum max mean matmul transpose reshape
syn keyword aicmOp           cos floor ceil round sign isnan not cast pow mod fmod
syn keyword aicmOp           equal less less_equal greater greater_equal and or xor where
syn keyword aicmOp           program_id zeros full dot idiv irem
syn keyword aicmOp           conv2d max_pool2d avg_pool2d
syn keyword aicmKeyword      im2col window_count window_max window_sum window
syn keyword aicmOp           broadcast extract join

" Kernel kinds, between brackets after the kernel's name.
syn match   aicmKind         "\[\s*\(matmul_epilogue\|matmul\|elementwise\|reduction\|row_reduction\|opaque\|attention\)\s*\]"

" Names.
syn match   aicmValue        "%\([A-Za-z_][A-Za-z0-9_.]*\|\d\+\)"
syn match   aicmSymbol       "@[A-Za-z_][A-Za-z0-9_.]*"
syn match   aicmAttr         "\<[A-Za-z_][A-Za-z0-9_-]*\ze="

" Literals.
syn keyword aicmBoolean      True False true false
syn match   aicmNumber       "-\?\<\d\+\>"
syn match   aicmFloat        "-\?\<\d\+\.\d*\([eE][-+]\?\d\+\)\?"
syn match   aicmFloat        "-\?\.\d\+\([eE][-+]\?\d\+\)\?"
syn match   aicmFloat        "-\?\<\d\+[eE][-+]\?\d\+\>"
syn match   aicmFloat        "-\?\<\(inf\|nan\)\>"

hi def link aicmComment      Comment
hi def link aicmTodo         Todo
hi def link aicmDirective    SpecialComment
hi def link aicmSplit        PreProc
hi def link aicmKeyword      Keyword
hi def link aicmType         Type
hi def link aicmOp           Function
hi def link aicmKind         Structure
hi def link aicmValue        Identifier
hi def link aicmSymbol       Label
hi def link aicmAttr         Special
hi def link aicmBoolean      Boolean
hi def link aicmNumber       Number
hi def link aicmFloat        Float

let b:current_syntax = "aicm"

let &cpo = s:cpo_save
unlet s:cpo_save
