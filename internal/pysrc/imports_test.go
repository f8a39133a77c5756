package pysrc

import (
	"reflect"
	"strings"
	"testing"
)

func TestImports(t *testing.T) {
	src := `"""Docstring: import fake_in_docstring
from fake import nothing
"""
import os, helpers as h  # import fake_in_comment
from . import sibling
from ..pkg.mod import (a,
    b as c)
x = "import fake_in_string"; import after_semicolon
s = r'''
import fake_in_raw_triple
'''
if True:
    from deep.er import thing
y = f"{1}" \
    "from fake import z"
from tests.util import *
`
	var got []string
	for _, imp := range Imports(src) {
		got = append(got, strings.Repeat(".", imp.Level)+imp.Module+" "+strings.Join(imp.Names, ","))
	}
	want := []string{"os ", "helpers ", ". sibling", "..pkg.mod a,b", "after_semicolon ", "deep.er thing", "tests.util *"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("imports\n got %q\nwant %q", got, want)
	}
}
