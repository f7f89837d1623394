package ftracetext

import (
	"errors"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/analyze/trace"
)

type row struct {
	comm      string
	pid, tgid int
	cpu       int
	ts        uint64
	name      string
	fields    string
}

func read(t *testing.T, text string) ([]row, *Reader) {
	t.Helper()
	r := NewReader(strings.NewReader(text))
	var out []row
	err := r.Run(func(e *trace.Event) error {
		if e.Kind == trace.Lost {
			out = append(out, row{name: "LOST", pid: int(e.Count), cpu: e.CPU})
			return nil
		}
		var kv []string
		for _, f := range e.Fields {
			kv = append(kv, f.Key+"="+f.Val)
		}
		out = append(out, row{e.Comm, e.PID, e.TGID, e.CPU, e.TS, e.Name, strings.Join(kv, " ")})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, r
}

// The column layouts the kernel and trace-cmd print (ftrace.rst, trace_output.c).
func TestVariants(t *testing.T) {
	cases := []struct {
		name, text string
		want       row
	}{
		{"no irq-info, old 3-digit cpu", "            <...>-1447  [001] 1038282.286875: myprobe: (do_sys_open+0x0/0xd6) dfd=3 filename=7fffd1ec4440 flags=8000 mode=0\n",
			row{"<...>", 1447, 0, 1, 1038282286875000, "myprobe", "__probe_ip=do_sys_open+0x0/0xd6 dfd=3 filename=7fffd1ec4440 flags=8000 mode=0"}},
		{"2-digit cpu", "  bash-4000  [01]  1477.606694: zfree_entry: (0x446420) arg1=446420 arg2=79\n",
			row{"bash", 4000, 0, 1, 1477606694000, "zfree_entry", "__probe_ip=0x446420 arg1=446420 arg2=79"}},
		{"4 flags", "              bash-1977  [000] .... 17284.993652: sys_close <-system_call_fastpath\n",
			row{"bash", 1977, 0, 0, 17284993652000, "function", "ip=sys_close parent_ip=system_call_fastpath"}},
		{"5 flags", "               sh-75      [000] .....    33.793362: myprobe: (sys_clone+0xc/0xa0) r0=0x1200011 r1=0x0 r2=0x0\n",
			row{"sh", 75, 0, 0, 33793362000, "myprobe", "__probe_ip=sys_clone+0xc/0xa0 r0=0x1200011 r1=0x0 r2=0x0"}},
		{"tgid", "         refprog-15761   (  15761) [000] DBZff 10284.171179: work__return: (0x401316 <- 0x4011c6) ret=190\n",
			row{"refprog", 15761, 15761, 0, 10284171179000, "work__return", "__probe_ret_ip=0x401316 __probe_func=0x4011c6 ret=190"}},
		{"tgid unknown", "  kworker/u16:2-events_unbound-88 (-------) [003] d..1. 5.000001: ev: a=1\n",
			row{"kworker/u16:2-events_unbound", 88, 0, 3, 5000001000, "ev", "a=1"}},
		{"latency format", " refprog-15761     0DBZff 10284171075us!: work: (0x4011c6) depth=0\n",
			row{"refprog", 15761, 0, 0, 10284171075000, "work", "__probe_ip=0x4011c6 depth=0"}},
		{"trace-cmd report with buffer", "gprobe_x:               ls-29481 [000]  9542.986149: sched_process_exec:   filename=/usr/bin/ls pid=29481 old_pid=29481\n",
			row{"ls", 29481, 0, 0, 9542986149000, "sched_process_exec", "filename=/usr/bin/ls pid=29481 old_pid=29481"}},
		{"trace-cmd -t ns", "cpus=2\n      ls-1 [001]  9542.986149123: e: s=\"a b\" x=0x10\n",
			row{"ls", 1, 0, 1, 9542986149123, "e", "s=a b x=0x10"}},
		{"trace-cmd uretprobe", "cpus=2\ngrp:   refprog-8917  [000] 13607.929611: work__return:         (4011c6 <- 401316) ret=190\n",
			row{"refprog", 8917, 0, 0, 13607929611000, "work__return", "__probe_ret_ip=0x401316 __probe_func=0x4011c6 ret=190"}},
		{"trace-cmd uprobe", "cpus=2\n   refprog-8917  [000] 13607.930094: obj_get:              (401156) obj=0x376312a0\n",
			row{"refprog", 8917, 0, 0, 13607930094000, "obj_get", "__probe_ip=0x401156 obj=0x376312a0"}},
		{"uretprobe two spaces", "  zsh-24842 [006] 258544.995456: zfree_exit:  (0x446540 <- 0x446420) arg1=446540 arg2=0\n",
			row{"zsh", 24842, 0, 6, 258544995456000, "zfree_exit", "__probe_ret_ip=0x446540 __probe_func=0x446420 arg1=446540 arg2=0"}},
	}
	for _, c := range cases {
		t.Log(c.name)
		got, _ := read(t, "# tracer: nop\n#\n"+c.text)
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

func TestLostAndTruncated(t *testing.T) {
	text := "# entries-in-buffer/entries-written: 2/7   #P:4\n" +
		"  a-1 [000] .... 1.000001: e: x=1\n" +
		"CPU:2 [LOST 12 EVENTS]\n" +
		"CPU:1 [EVENTS DROPPED]\n" +
		"CPU:0 [3 EVENTS DROPPED]\n" +
		"  a-1 [000] .... 1.000002: e: x=2\n" +
		"  a-1 [000] .... 1.0000"
	got, r := read(t, text)
	if len(got) != 6 || got[0].name != "LOST" || got[0].pid != 5 || got[2].pid != 12 || got[2].cpu != 2 || got[3].pid != -1 || got[4].pid != 3 {
		t.Errorf("%+v", got)
	}
	info := r.Info()
	if info.Lost != 5+12+3 || info.LostUnknown != 1 || info.Events != 2 || !info.Truncated {
		t.Errorf("info %+v", info)
	}
}

func TestNotText(t *testing.T) {
	r := NewReader(strings.NewReader("just words\nand more words\n"))
	if err := r.Run(func(*trace.Event) error { return nil }); !errors.Is(err, ErrNotText) {
		t.Errorf("%v", err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add("  a-1 [000] .... 1.000001: e: (0x1 <- 0x2) x=1 s=\"q\"\nCPU:2 [LOST 12 EVENTS]\n")
	f.Add(" refprog-15761     0DBZff 10284171075us!: work: (0x4011c6) depth=0\n")
	f.Fuzz(func(t *testing.T, text string) {
		r := NewReader(strings.NewReader(text))
		r.Run(func(e *trace.Event) error {
			for _, kv := range e.Fields {
				trace.ParseUint(kv.Val)
			}
			return nil
		})
	})
}
