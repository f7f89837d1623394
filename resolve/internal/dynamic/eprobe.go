package dynamic

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/internal/brief"
	"github.com/gprobe/gprobe/internal/tracefmt/eventfmt"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/spec"
)

// Event probes (e:) read the fields of another trace event when it fires.
// An argument is written as C on the event's fields:
//
//	FIELD[:TYPE]                  the field, typed from the event's format
//	FIELD->MEMBER[.MEMBER...]     members through a field that points to a
//	                              struct (its type in the format names it)
//	(STRUCT)FIELD->MEMBER...      the field read as a pointer to struct
//	                              STRUCT, "struct " optional (for void *
//	                              fields; newer kernels write a BTF type
//	                              cast so)
//	NAME=...                      the argument's name
//
// with :string or :ustring for text; members resolve through BTF (the
// vmlinux's .BTF, or the running kernel's). Anything else ($FIELD,
// +OFF($FIELD), $comm, @SYMBOL) is kept as written, and the words after
// "if" are the eprobe's filter on the attached event.

// Eprobe resolves words on the trace event ev, whose tracefs format
// description is format, into an event probe named as the event.
func (k *Kinds) Eprobe(ev probe.EventID, format string, words []string) (probe.Probe, error) {
	feat := k.Im.TargetFeatures()
	if !feat.Eprobes {
		return probe.Probe{}, core.Errorf(core.ErrUnsupported, "%s; the target kernel's tracefs README does not offer them.", probedef.KindRequirement(probe.Eprobe))
	}
	fmtd, err := eventfmt.Parse(ev.System, format)
	if err != nil {
		return probe.Probe{}, core.Errorf(core.ErrInvalid, "The format of %s/%s: %v", ev.System, ev.Name, err)
	}
	p := probe.Probe{Kind: probe.Eprobe, Group: spec.DefaultGroup, Event: ev.Name, Target: probe.Location{Event: ev}}
	if i := slices.Index(words, "if"); i >= 0 {
		if i == len(words)-1 {
			return probe.Probe{}, core.Errorf(core.ErrInvalid, "No filter after 'if'.")
		}
		p.Filter = strings.Join(words[i+1:], " ")
		words = words[:i]
	}
	for _, w := range words {
		fa, err := k.eventArg(ev, fmtd, w)
		if err != nil {
			return probe.Probe{}, err
		}
		p.Args = append(p.Args, fa)
	}
	return p, nil
}

// eventFieldReg stands for the event field while BTF resolves the members
// reached through it (BTF resolves them from a parameter in a register).
const eventFieldReg = "$event-field"

// eventArg resolves one word of an eprobe.
func (k *Kinds) eventArg(ev probe.EventID, f *eventfmt.Format, w string) (probe.FetchArg, error) {
	name, body, named := strings.Cut(w, "=")
	if !named {
		body = w
	}
	if body == "" || named && name == "" {
		return probe.FetchArg{}, core.Errorf(core.ErrInvalid, "%q: write [NAME=]FIELD[:TYPE] (an argument has a name before '=' and a field after it).", w)
	}
	cast := ""
	if strings.HasPrefix(body, "(") {
		end := strings.IndexByte(body, ')')
		if end < 0 {
			return probe.FetchArg{}, core.Errorf(core.ErrInvalid, "%s: the cast is not closed with ')'.", w)
		}
		cast, body = strings.TrimSpace(body[1:end]), body[end+1:]
	}
	a, err := spec.ParseArg(body)
	if err != nil || !spec.IsCVarname(a.Var) {
		if cast != "" {
			return probe.FetchArg{}, core.Errorf(core.ErrInvalid, "%s: a cast applies to a field of %s/%s.", w, ev.System, ev.Name)
		}
		// Raw fetch syntax ($FIELD, +8($FIELD), $comm): the kernel's own.
		fa := splitFetchArg(w)
		if fa.Expr.String() == "" {
			return probe.FetchArg{}, core.Errorf(core.ErrInvalid, "%q: write [NAME=]FIELD[:TYPE] (no field or fetch argument given).", w)
		}
		return fa, nil
	}
	fld := f.Field(a.Var)
	if fld == nil || fld.Common {
		var names []string
		for _, x := range f.Args() {
			names = append(names, x.Name)
		}
		return probe.FetchArg{}, core.Errorf(core.ErrNotFound, "%s/%s has no field '%s' (fields: %s).", ev.System, ev.Name, brief.Cut(a.Var, brief.MaxItemLen), brief.Join(names, ", "))
	}
	if named {
		a.Name, a.HasName = name, true
	}
	if len(a.Fields) == 0 && cast == "" {
		fa := probe.FetchArg{Expr: probe.EventField(a.Var), Type: a.Type}
		if a.HasName {
			fa.Name = a.Name
		} else {
			fa.Name = a.Var
		}
		if !a.HasType {
			fa.Type = fieldType(fld, k.Im.Opts.Features.HexTypes)
		}
		return fa, nil
	}
	return k.eventMembers(ev, fld, cast, a)
}

// fieldType is the fetch type of an event field: a string for character
// arrays and dynamic strings, hex for pointers, else its size and sign.
func fieldType(f *eventfmt.Field, hex bool) string {
	switch {
	case f.IsString():
		return "string"
	case strings.Contains(f.Type, "*"):
		if hex {
			return "x64"
		}
		return "u64"
	}
	bits := f.Size * 8
	switch bits {
	case 8, 16, 32, 64:
	default:
		return ""
	}
	if f.Signed {
		return "s" + strconv.Itoa(bits)
	}
	if hex {
		return "x" + strconv.Itoa(bits)
	}
	return "u" + strconv.Itoa(bits)
}

// eventMembers resolves FIELD->MEMBER... (with an optional cast) through
// BTF: the field is the pointer to the struct the cast or its format type
// names.
func (k *Kinds) eventMembers(ev probe.EventID, fld *eventfmt.Field, cast string, a *spec.Arg) (probe.FetchArg, error) {
	s, err := k.Prototypes()
	if err != nil || s == nil {
		return probe.FetchArg{}, core.Errorf(core.ErrNeedsDWARF, "%s: members of an event's field need BTF (a vmlinux with a .BTF section, or /sys/kernel/btf/vmlinux): %v", a.Raw, err)
	}
	typeName := cast
	if typeName == "" {
		typeName = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(fld.Type, "const ")), "*"))
		if !strings.HasSuffix(strings.TrimSpace(fld.Type), "*") || typeName == "void" || !strings.HasPrefix(typeName, "struct ") && !strings.HasPrefix(typeName, "union ") {
			return probe.FetchArg{}, core.Errorf(core.ErrInvalid, "%s: field '%s' of %s/%s is %s; name the struct it points to with a cast: (STRUCT)%s", a.Raw, fld.Name, ev.System, ev.Name, fld.Type, a.Raw)
		}
	}
	if strings.HasSuffix(typeName, "*") {
		typeName = strings.TrimSpace(strings.TrimSuffix(typeName, "*"))
	}
	typeName = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(typeName, "struct "), "union "))
	if err := s.HasStruct(typeName); err != nil {
		return probe.FetchArg{}, core.Errorf(core.ErrNotFound, "%s: no struct %s in BTF: %v", a.Raw, typeName, err)
	}
	if len(a.Fields) == 0 {
		return probe.FetchArg{}, core.Errorf(core.ErrInvalid, "%s: a cast is read through: write (%s)%s->MEMBER.", a.Raw, typeName, a.Var)
	}
	fa, err := s.StructArg(ev.System+"/"+ev.Name, typeName, eventFieldReg, a)
	if err != nil {
		return probe.FetchArg{}, err
	}
	fa.Expr = onEventField(fa.Expr, fld.Name)
	return fa, nil
}

// onEventField puts the field where the stand-in register is.
func onEventField(f probe.Fetch, field string) probe.Fetch {
	switch x := f.(type) {
	case probe.Reg:
		if x == eventFieldReg {
			return probe.EventField(field)
		}
	case probe.Mem:
		x.Inner = onEventField(x.Inner, field)
		return x
	}
	return f
}

// splitFetchArg reads a word in the kernel's own syntax, NAME=FETCH:TYPE.
func splitFetchArg(w string) probe.FetchArg {
	var fa probe.FetchArg
	if eq := strings.IndexByte(w, '='); eq >= 0 {
		fa.Name, w = w[:eq], w[eq+1:]
	}
	fetch, typ, _ := strings.Cut(w, ":")
	fa.Expr, fa.Type = probe.ParseFetchOf(probe.Eprobe, fetch), typ
	return fa
}
