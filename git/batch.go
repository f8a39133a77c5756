package git

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate"
)

// ShowFiles returns the committed bytes of each of files at rev that is a
// file there, with one git process (`git cat-file --batch`), as Show does
// for one: no filter, no conversion. A path that is absent, a folder, or
// cannot be named on one line is left out of the map.
func (c *Client) ShowFiles(ctx context.Context, rev string, files []string) (map[string][]byte, error) {
	sha, err := c.RevParse(ctx, rev)
	if err != nil {
		return nil, err
	}
	var in bytes.Buffer
	var asked []string
	for _, f := range files {
		clean, err := cleanRepoPath(f)
		if err != nil || strings.ContainsAny(clean, "\n\r") {
			continue
		}
		in.WriteString(sha + ":" + clean + "\n")
		asked = append(asked, clean)
	}
	out := make(map[string][]byte, len(asked))
	if len(asked) == 0 {
		return out, nil
	}
	raw, err := c.runInput(ctx, "", in.Bytes(), "cat-file", "--batch")
	if err != nil {
		return nil, wrapRepoErr("git cat-file --batch", c.Dir, err)
	}
	br := bufio.NewReader(bytes.NewReader(raw))
	for _, f := range asked {
		head, err := br.ReadString('\n')
		if err != nil {
			return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "git cat-file --batch", Message: "short output", Err: err}
		}
		fields := strings.Fields(head)
		if len(fields) != 3 {
			continue // "<object> missing" or "ambiguous"
		}
		size, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil || size < 0 {
			return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "git cat-file --batch", Message: fmt.Sprintf("bad header %q", head)}
		}
		body := make([]byte, size+1) // the contents and a newline
		if _, err := io.ReadFull(br, body); err != nil {
			return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "git cat-file --batch", Message: "short output", Err: err}
		}
		if fields[1] == "blob" {
			out[f] = body[:size]
		}
	}
	return out, nil
}
