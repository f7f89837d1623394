package probedef

import "github.com/gprobe/gprobe/emit/probe"

// A few kernel prototypes and structures, laid out as Debian's x86-64
// Linux 6.12 has them, for the BTF cases of the syntax table.

type fakeType struct {
	kind    BTFKind
	bits    int
	signed  bool
	elem    func() BTFType
	members []fakeMember
}

type fakeMember struct {
	name   string
	typ    func() BTFType
	bitOff int
}

func (t *fakeType) Kind() BTFKind { return t.kind }
func (t *fakeType) Int() (int, int, bool) {
	return t.bits, 0, t.signed
}
func (t *fakeType) Elem() BTFType {
	if t.elem == nil {
		return nil
	}
	return t.elem()
}
func (t *fakeType) Member(name string) (BTFType, int, int, bool) {
	for _, m := range t.members {
		if m.name == name {
			return m.typ(), m.bitOff, 0, true
		}
	}
	return nil, 0, 0, false
}

var (
	fakeU8    = &fakeType{kind: BTFInt, bits: 8}
	fakeS64   = &fakeType{kind: BTFInt, bits: 64, signed: true}
	fakeU64   = &fakeType{kind: BTFInt, bits: 64}
	fakeVoid  = &fakeType{kind: BTFOther}
	fakeQstr  = &fakeType{kind: BTFStruct, members: []fakeMember{{"hash_len", ret(fakeU64), 0}, {"name", ptr(fakeU8), 64}}}
	fakeDentr = &fakeType{kind: BTFStruct, members: []fakeMember{{"d_name", ret(fakeQstr), 32 * 8}}}
	fakePath  = &fakeType{kind: BTFStruct, members: []fakeMember{{"mnt", ptr(fakeVoid), 0}, {"dentry", ptr(fakeDentr), 64}}}
	fakeFile  = &fakeType{kind: BTFStruct, members: []fakeMember{{"f_path", ret(fakePath), 64 * 8}, {"f_pos", ret(fakeS64), 112 * 8}}}
)

func ret(t BTFType) func() BTFType { return func() BTFType { return t } }
func ptr(t BTFType) func() BTFType {
	p := &fakeType{kind: BTFPointer, elem: ret(t)}
	return func() BTFType { return p }
}

type fakeBTF map[string]struct {
	params []BTFParam
	ret    BTFType
}

func (b fakeBTF) Func(name string) ([]BTFParam, BTFType, bool) {
	f, ok := b[name]
	return f.params, f.ret, ok
}

var testBTF = fakeBTF{
	"vfs_read":          {params: []BTFParam{{"file", ptr(fakeFile)()}, {"buf", ptr(fakeU8)()}, {"count", fakeU64}, {"pos", ptr(fakeS64)()}}, ret: fakeS64},
	"kfree":             {params: []BTFParam{{"object", ptr(fakeVoid)()}}},
	"__probestub_kfree": {params: []BTFParam{{"__data", ptr(fakeVoid)()}, {"call_site", fakeU64}, {"ptr", ptr(fakeVoid)()}}},
}

// testEventFields are the fields of syscalls/sys_enter_openat.
func testEventFields(e probe.EventID) ([]string, bool) {
	if e != (probe.EventID{System: "syscalls", Name: "sys_enter_openat"}) {
		return nil, false
	}
	return []string{"__syscall_nr", "dfd", "filename", "flags", "mode"}, true
}
