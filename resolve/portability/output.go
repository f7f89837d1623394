package portability

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/gprobe/gprobe/emit/probe"
)

// cell is how a Result reads in the matrix: its status, and the number of
// sites when there are any.
func (c *Result) cell() string {
	if c.Sites > 0 {
		return fmt.Sprintf("%s %d", c.Status, c.Sites)
	}
	return string(c.Status)
}

// WriteText prints the matrix: the kernels numbered K1..Kn, one row per
// point with a column per kernel, then why each point that did not
// resolve failed there.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintln(w, "kernels:")
	for i, k := range r.Kernels {
		fmt.Fprintf(w, "  K%d  %s\n", i+1, k)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "SPEC")
	for i := range r.Kernels {
		fmt.Fprintf(tw, "\tK%d", i+1)
	}
	fmt.Fprintln(tw)
	n := len(r.Kernels)
	for i := 0; i < len(r.Results); i += n {
		fmt.Fprint(tw, r.Results[i].Spec)
		for _, c := range r.Results[i : i+n] {
			fmt.Fprintf(tw, "\t%s", c.cell())
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	first := true
	for i, c := range r.Results {
		if c.Sites > 0 || c.Reason == "" {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nnot resolved:")
			first = false
		}
		fmt.Fprintf(w, "  K%d  %s: %s\n", i%n+1, c.Spec, c.Reason)
	}
	_, err := fmt.Fprintln(w)
	return err
}

// Definitions are the lines `add --from` installs on kernel k (an index in
// Kernels): every point's definitions in list order, an event name an
// earlier point took getting its first free _N suffix (as perf probe -f
// names a second probe on one function).
func (r *Report) Definitions(k int) []string {
	taken := map[string]bool{}
	var out []string
	n := len(r.Kernels)
	for i := k; i < len(r.Results); i += n {
		var names []string
		for _, p := range r.Results[i].probes {
			if taken[p.Event] {
				base := p.Event
				if p.Return {
					base = strings.TrimSuffix(base, "__return")
				}
				if name, ok := probe.FreeName(base, func(s string) bool { return taken[s] }); ok {
					p.Event = name
				}
			}
			names = append(names, p.Event)
			out = append(out, p.String())
		}
		for _, name := range names {
			taken[name] = true
		}
	}
	return out
}

// Labels are short unique names for the kernels: the shortest trailing
// parts of their paths that tell them apart ("6.1.0-56-cloud-amd64/vmlinux"
// for two files both called vmlinux).
func Labels(kernels []string) []string {
	parts := make([][]string, len(kernels))
	for i, k := range kernels {
		parts[i] = strings.Split(filepath.Clean(k), string(filepath.Separator))
	}
	labels := make([]string, len(kernels))
	for depth := 1; ; depth++ {
		seen := map[string]int{}
		for i, p := range parts {
			labels[i] = filepath.Join(p[max(0, len(p)-depth):]...)
			seen[labels[i]]++
		}
		unique := true
		for i, p := range parts {
			if seen[labels[i]] > 1 && depth < len(p) {
				unique = false
			}
		}
		if unique {
			return labels
		}
	}
}

// WriteDefinitions writes each kernel's Definitions to dir (created if
// needed), one file per kernel named after its label ('/' becomes '_')
// with ".defs" appended, and returns the paths in kernel order. A kernel
// where nothing resolved gets no file ("" in its place).
func (r *Report) WriteDefinitions(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for k, label := range Labels(r.Kernels) {
		defs := r.Definitions(k)
		if len(defs) == 0 {
			paths = append(paths, "")
			continue
		}
		path := filepath.Join(dir, strings.ReplaceAll(label, string(filepath.Separator), "_")+".defs")
		text := fmt.Sprintf("# gprobe check: definitions for %s (install with: gprobe add --from FILE)\n%s\n", r.Kernels[k], strings.Join(defs, "\n"))
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// WriteJSON writes the matrix as JSON: the kernels, and for each point and
// kernel its spec, kernel, status, sites and definitions.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// Request is one run of gprobe check: the probe list in the file Probes
// ("-": stdin) resolved on Kernels, the matrix written as text or JSON,
// and with OutDir each kernel's definitions written there.
type Request struct {
	Probes  string
	Kernels []string
	Options Options
	OutDir  string
	JSON    bool
}

// Run runs req: the matrix to w, a line "KERNEL: FILE" per definition
// file written to log. It returns the points that resolve on no kernel;
// a probe list that does not read is an error wrapping ErrBadProbeList.
func (req Request) Run(w, log io.Writer) (unresolved []string, err error) {
	points, err := ReadProbesFile(req.Probes)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Op == "open" {
		err = fmt.Errorf("--probes: %w", err)
	}
	if err != nil {
		return nil, err
	}
	rep, err := Check(points, req.Kernels, req.Options)
	if err != nil {
		return nil, err
	}
	if req.OutDir != "" {
		paths, err := rep.WriteDefinitions(req.OutDir)
		if err != nil {
			return nil, err
		}
		for i, p := range paths {
			if p != "" {
				fmt.Fprintf(log, "%s: %s\n", rep.Kernels[i], p)
			}
		}
	}
	if req.JSON {
		err = rep.WriteJSON(w)
	} else {
		err = rep.WriteText(w)
	}
	if err != nil {
		return nil, err
	}
	return rep.Unresolved(), nil
}
