package debuginfod

import (
	"fmt"
	"io"
	"net/url"
	"time"
)

// ProgressLine returns a Progress function that keeps one line up to date
// on the terminal w: what is downloaded from where, bytes received of the
// total, and the rate (before that, how long the servers have been
// waited for); the last call ends the line.
//
//	debuginfod: debuginfo 3b43fad5 from 127.0.0.1:8002: 212.4 MiB of 562.6 MiB, 48.3 MiB/s
func ProgressLine(w io.Writer) func(Progress) {
	return func(p Progress) {
		id := p.BuildID
		if len(id) > 8 {
			id = id[:8]
		}
		if p.Server == "" {
			servers := "server"
			if p.Servers != 1 {
				servers = fmt.Sprintf("%d servers", p.Servers)
			}
			fmt.Fprintf(w, "\r\x1b[Kdebuginfod: %s %s: asking %s, %s", p.Artifact, id, servers, p.Elapsed.Round(time.Second))
			if p.Done {
				fmt.Fprintln(w, ", failed")
			}
			return
		}
		server := p.Server
		if u, err := url.Parse(p.Server); err == nil && u.Host != "" {
			server = u.Host
		}
		var got string
		if p.Total >= 0 {
			got = byteSize(p.Received) + " of " + byteSize(p.Total)
		} else {
			got = byteSize(p.Received)
		}
		rate := ""
		if s := p.Elapsed.Seconds(); s > 0 {
			rate = ", " + byteSize(int64(float64(p.Received)/s)) + "/s"
		}
		// \r and erase-to-end-of-line: each state overwrites the last.
		fmt.Fprintf(w, "\r\x1b[Kdebuginfod: %s %s from %s: %s%s", p.Artifact, id, server, got, rate)
		if p.Done {
			if p.Err != nil {
				fmt.Fprint(w, ", failed")
			} else {
				fmt.Fprintf(w, " in %s", p.Elapsed.Round(100*time.Millisecond))
			}
			fmt.Fprintln(w)
		}
	}
}

// byteSize is n in B, KiB, MiB or GiB, one decimal.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}

// FromEnvTo is FromEnv for a command that reports to w: with progress, its
// downloads draw ProgressLine on w (a terminal); warn receives Warn's
// lines. It is nil without servers.
func FromEnvTo(w io.Writer, progress bool, warn func(string)) *Client {
	c := FromEnv()
	if c == nil {
		return nil
	}
	if progress {
		c.Progress = ProgressLine(w)
	}
	c.Warn = warn
	return c
}
