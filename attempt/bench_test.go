package attempt

import (
	"context"
	"io"
	"os/exec"
	"testing"
)

// The peer is os/exec as a caller would use it without the attempt's
// supervisor: no process group, no budget, output discarded. The ratio of
// the two is the supervisor's overhead per attempt.

func BenchmarkRunTrue(b *testing.B) {
	for b.Loop() {
		if o := Run(context.Background(), Command{Argv: []string{"true"}}); o.Result != Pass {
			b.Fatal(o.Result, o.Reason)
		}
	}
}

func BenchmarkExecTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

const benchOutput = "head -c 52428800 /dev/zero"

func BenchmarkRunOutput50MB(b *testing.B) {
	b.SetBytes(50 << 20)
	for b.Loop() {
		if o := Run(context.Background(), Command{Argv: []string{"sh", "-c", benchOutput}}); o.Result != Pass {
			b.Fatal(o.Result, o.Reason)
		}
	}
}

func BenchmarkExecOutput50MB(b *testing.B) {
	b.SetBytes(50 << 20)
	for b.Loop() {
		c := exec.Command("sh", "-c", benchOutput)
		c.Stdout, c.Stderr = io.Discard, io.Discard
		if err := c.Run(); err != nil {
			b.Fatal(err)
		}
	}
}
