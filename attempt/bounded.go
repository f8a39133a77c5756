package attempt

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// Bounded keeps at most Max bytes of what a command prints, and says
// whether it dropped some (Over): a listing's or a download's output,
// read whole after the command ends.
type Bounded struct {
	bytes.Buffer
	Max  int
	Over bool
}

func (b *Bounded) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.Max {
		b.Over = true
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// ReadBounded reads a file of at most max bytes (a report a command
// wrote, a settings file): a larger one is an error, never read whole.
func ReadBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return b, err
}
