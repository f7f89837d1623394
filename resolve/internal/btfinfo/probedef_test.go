package btfinfo

import (
	"errors"
	"os"
	"testing"

	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/internal/testenv"
)

// TestProbeBTF: Debian's 6.12 vmlinux BTF, as the kernel's probe-event
// parser reads it, answers the checks of BTF arguments as that kernel's
// error_log does (the cases the 6.12 guest agrees on).
func TestProbeBTF(t *testing.T) {
	vmlinux, _ := testenv.RequireVmlinux(t, testenv.Linux612)
	s, err := Load(vmlinux)
	if err != nil {
		t.Fatal(err)
	}
	b := s.ProbeBTF()
	params, ret, ok := b.Func("vfs_read")
	if !ok || len(params) != 4 || params[0].Name != "file" || params[2].Name != "count" || ret == nil || ret.Kind() != probedef.BTFInt {
		t.Fatalf("vfs_read: %+v %v %v", params, ret, ok)
	}
	file := params[0].Type.Elem()
	if typ, off, _, ok := file.Member("f_pos"); !ok || off != 112*8 || typ.Kind() != probedef.BTFInt {
		t.Errorf("file->f_pos: %v at bit %d", ok, off)
	}
	path, off, _, ok := file.Member("f_path")
	if !ok || off != 64*8 || path.Kind() != probedef.BTFStruct {
		t.Fatalf("file.f_path: %v at bit %d", ok, off)
	}
	if d, off, _, ok := path.Member("dentry"); !ok || off != 64 || d.Kind() != probedef.BTFPointer {
		t.Errorf("path.dentry: %v at bit %d", ok, off)
	}
	if _, ret, ok := b.Func("kfree"); !ok || ret != nil {
		t.Errorf("kfree returns %v (%v), want void", ret, ok)
	}
	if params, _, ok := b.Func("__probestub_sched_process_exec"); !ok || len(params) != 4 || params[1].Name != "p" || params[3].Name != "bprm" {
		t.Errorf("the sched_process_exec stub: %+v", params)
	}
	if _, _, ok := b.Func("no_such_function"); ok {
		t.Error("no_such_function found")
	}

	readme, err := os.ReadFile("../../../emit/probedef/testdata/readme/6.12.txt")
	if err != nil {
		t.Fatal(err)
	}
	feat := probedef.ParseFeatures(string(readme))
	opts := &probedef.Options{Features: &feat, BTF: b}
	for line, code := range map[string]string{
		"f vfs_read count file->f_pos file->f_path.dentry->d_name.name:string": "",
		"f vfs_read%return $arg* $retval":                                      "",
		"f vfs_read count $arg*":                                               "USED_ARG_NAME",
		"t sched_process_exec p->comm:string bprm->filename:string":            "",
		"f vfs_read hoge":                 "NO_BTFARG",
		"f kfree%return $retval":          "NO_RETVAL",
		"f vfs_read%return $retval->foo":  "NO_PTR_STRCT",
		"f vfs_read file->foo":            "NO_BTF_FIELD",
		"f vfs_read file:string":          "BAD_TYPE4STR",
		"f vfs_read file->f_path->dentry": "NO_PTR_STRCT",
		"t kfree ptr->foo":                "BAD_BTF_TID",
		"t kfree $arg3":                   "NO_BTFARG",
		"f vfs_read file->f_path.x":       "NO_BTF_FIELD",
		"f vfs_read file.f_pos":           "NOSUP_DAT_ARG",
	} {
		_, err := probedef.Parse(line, opts)
		var pe *probedef.Error
		switch {
		case code == "" && err != nil:
			t.Errorf("%q: %v", line, err)
		case code != "" && (!errors.As(err, &pe) || pe.Code != code):
			t.Errorf("%q: got %v, want %s", line, err, code)
		}
	}
}
