; A return statement; each is wrapped in braces that first set the frame's
; exit site. Run at each `return` token inside an instrumented function.
(return_statement) @return
