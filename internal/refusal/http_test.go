package refusal

import (
	"strings"
	"testing"
)

func TestHTTPStatus(t *testing.T) {
	for _, c := range []struct {
		code     int
		accepted []int32
		body     string
		want     []string
	}{
		{401, nil, `{"error": "invalid api key"}`, []string{"the endpoint answered 401 Unauthorized", `saying "{\"error\": \"invalid api key\"}"`, "spec.http.endpoint.headers", "spec.identity"}},
		{404, nil, "", []string{"404 Not Found, client d-1", "spec.http.endpoint.url"}},
		{501, nil, "<html>\n  <body>Unsupported method ('POST')</body>\n</html>\n", []string{"501 Not Implemented", `"<html> <body>Unsupported method ('POST')</body> </html>"`, "spec.http.endpoint.method"}},
		{200, []int32{202}, "", []string{"acceptedStatuses ([202]) does not list it: add 200"}},
		{429, nil, "", []string{"workload.rate", "docs/capacity.md"}},
		{503, nil, "\x00\x01\x02\xff\xfe\xfd\xfc\xfb", []string{"503 Service Unavailable, client d-1;", "workload.rate"}},
		{413, nil, strings.Repeat("x", 400), []string{"workload.payloadBytes", strings.Repeat("x", 160) + "…\""}},
		{418, nil, "", []string{"418 I'm a teapot", "check spec.http.endpoint (url, method, headers, body)"}},
		{500, nil, "", []string{"its own logs say why"}},
	} {
		got := HTTPStatus(c.code, c.accepted, []byte(c.body), "client d-1").Error()
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("HTTPStatus(%d, %q):\n  %s\nwant it to contain %q", c.code, c.body, got, w)
			}
		}
	}
}
