package control

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

type jsonBody struct{ data []byte }

func newJSONBody(v any) *jsonBody {
	data, _ := json.Marshal(v)
	return &jsonBody{data: data}
}

func (b *jsonBody) reader() io.Reader {
	if b == nil {
		return http.NoBody
	}
	return bytes.NewReader(b.data)
}

// readSmall reads at most 1 KiB of an error answer for a message.
func readSmall(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	return strings.TrimSpace(string(b))
}
