package plan

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// HTTPEndpoint is spec.http.endpoint compiled: the request each publisher sends per message to
// an HTTP ingestion endpoint of the user's own (docs/http-api.md, "Your own endpoint").
type HTTPEndpoint struct {
	Method string
	// URL, each header value and Body are templates; Secure is an https URL, Address its host and
	// port (the scheme's default when the URL has none).
	URL     RequestTemplate
	Headers map[string]RequestTemplate
	Body    RequestTemplate
	Secure  bool
	Address string
	Host    string // the URL's host, for TLS's server name
	// AcceptedStatuses are spec's acceptedStatuses (empty: any 2xx). Exported, as every field
	// of the plan: the workers read it from JSON.
	AcceptedStatuses []int32
}

// Accepted reports whether a response status means the endpoint took the message.
func (e *HTTPEndpoint) Accepted(status int) bool {
	if len(e.AcceptedStatuses) == 0 {
		return status >= 200 && status < 300
	}
	for _, s := range e.AcceptedStatuses {
		if int(s) == status {
			return true
		}
	}
	return false
}

// RequestTemplate is a request template in parts: literal text and placeholders.
type RequestTemplate []RequestPart

// RequestPart is literal text (Field "") or a placeholder.
type RequestPart struct {
	Text  string
	Field RequestField
}

// RequestField is a placeholder of a request template.
type RequestField string

// The placeholders: the url's and headers' four, and the body's payload in three encodings.
const (
	RequestDevice        RequestField = "device"
	RequestTopic         RequestField = "topic"
	RequestSeq           RequestField = "seq"
	RequestGroup         RequestField = "group"
	RequestPayload       RequestField = "payload"
	RequestPayloadBase64 RequestField = "payload:base64"
	RequestPayloadHex    RequestField = "payload:hex"
)

// parseTemplate splits s at its placeholders: {name}, a name of letters, digits and colons. Any
// other brace is text (a JSON body's). A name not in allowed is refused (field names the spec
// field for the message), so that a misspelt placeholder is not sent as it is.
func parseTemplate(field, s string, allowed ...RequestField) (RequestTemplate, error) {
	var t RequestTemplate
	text := func(x string) {
		if x == "" {
			return
		}
		if n := len(t); n > 0 && t[n-1].Field == "" {
			t[n-1].Text += x
			return
		}
		t = append(t, RequestPart{Text: x})
	}
	for s != "" {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			text(s)
			break
		}
		text(s[:i])
		j := 1
		for j < len(s)-i && isNameByte(s[i+j]) {
			j++
		}
		if j == 1 || j == len(s)-i || s[i+j] != '}' { // not a placeholder: a brace of the text
			text("{")
			s = s[i+1:]
			continue
		}
		name := RequestField(s[i+1 : i+j])
		if !slices.Contains(allowed, name) {
			return nil, fmt.Errorf("%s: {%s} is not a placeholder here; use %s", field, name, placeholders(allowed))
		}
		t = append(t, RequestPart{Field: name})
		s = s[i+j+1:]
	}
	return t, nil
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ':'
}

func placeholders(fs []RequestField) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = "{" + string(f) + "}"
	}
	return strings.Join(names, ", ")
}

// Has reports whether the template uses placeholder f.
func (t RequestTemplate) Has(f RequestField) bool {
	for _, p := range t {
		if p.Field == f {
			return true
		}
	}
	return false
}

var requestFields = []RequestField{RequestDevice, RequestTopic, RequestSeq, RequestGroup}

// compileEndpoint compiles spec.http.endpoint for an HTTP group g: its request, and the address
// its clients connect to instead of a gateway's (Group.ExternalGateway).
func compileEndpoint(spec *v1alpha1.MessagingBenchmarkSpec, g *Group) (*HTTPEndpoint, error) {
	s := spec.HTTP.Endpoint
	if s == nil {
		return nil, nil
	}
	if spec.Gateway.External != nil {
		return nil, fmt.Errorf("spec.http.endpoint: the endpoint is where the clients send; leave spec.gateway.external out")
	}
	if g.Fleet == nil && g.Subscribers > 0 {
		return nil, fmt.Errorf("spec.workload.subscribers: an HTTP endpoint of your own (spec.http.endpoint) takes messages in, and msgbench cannot observe where they go: set subscribers to 0 (the result then counts the messages sent and accepted), or subscribe with MQTT on the broker behind it in a device group (docs/http-api.md)")
	}
	e := &HTTPEndpoint{Method: s.Method, AcceptedStatuses: s.AcceptedStatuses}
	if e.Method == "" {
		e.Method = "POST"
	}
	u, err := url.Parse(strings.NewReplacer("{", "", "}", "").Replace(s.URL)) // the URL's shape, placeholders aside
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("spec.http.endpoint.url: %q is not an http:// or https:// URL with a host", s.URL)
	}
	if strings.ContainsAny(u.Host, "{}") || strings.Contains(strings.SplitN(s.URL, "/", 4)[2], "{") {
		return nil, fmt.Errorf("spec.http.endpoint.url: the host (%s) takes no placeholder: every client connects to one endpoint", u.Host)
	}
	e.Secure, e.Host = u.Scheme == "https", u.Hostname()
	port := u.Port()
	if port == "" {
		port = map[bool]string{false: "80", true: "443"}[e.Secure]
	}
	e.Address = net.JoinHostPort(e.Host, port)
	if g.HTTPVersion == v1alpha1.HTTP3 && !e.Secure {
		return nil, fmt.Errorf("spec.http.endpoint.url: HTTP/3 (spec.http.version 3) runs over QUIC, which is always encrypted: use an https:// URL")
	}
	if e.URL, err = parseTemplate("spec.http.endpoint.url", s.URL, requestFields...); err != nil {
		return nil, err
	}
	e.Headers = map[string]RequestTemplate{}
	for name, v := range s.Headers {
		switch strings.ToLower(name) {
		case "host", "content-length":
			return nil, fmt.Errorf("spec.http.endpoint.headers: %s is set by msgbench (from the url and the body)", name)
		}
		if e.Headers[name], err = parseTemplate("spec.http.endpoint.headers["+name+"]", v, requestFields...); err != nil {
			return nil, err
		}
	}
	body := "{payload}"
	if s.Body != nil {
		body = *s.Body
	}
	if e.Body, err = parseTemplate("spec.http.endpoint.body", body, append(requestFields, RequestPayload, RequestPayloadBase64, RequestPayloadHex)...); err != nil {
		return nil, err
	}
	return e, nil
}
