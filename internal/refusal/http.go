package refusal

import (
	"fmt"
	"net/http"
	"strings"
	"unicode"
)

// HTTPStatus explains an answer of an HTTP endpoint of the user's own (spec.http.endpoint)
// whose status does not mean accepted (its acceptedStatuses; any 2xx by default): what the status
// says and what to change. body is the start of the answer's body, the endpoint's own words
// (quoted, up to 160 characters); detail is this occurrence's (which device, which request).
func HTTPStatus(code int, accepted []int32, body []byte, detail string) *Error {
	what := fmt.Sprintf("the endpoint answered %d %s", code, http.StatusText(code))
	if s := quoteBody(body); s != "" {
		detail = join(", ", detail, "saying "+s)
	}
	return &Error{What: what, Detail: detail, Advice: httpAdvice(code, accepted)}
}

func httpAdvice(code int, accepted []int32) string {
	switch {
	case code >= 200 && code < 300:
		return fmt.Sprintf("spec.http.endpoint.acceptedStatuses (%v) does not list it: add %d there if it means the message was taken", accepted, code)
	case code >= 300 && code < 400:
		return "the endpoint sends the request elsewhere: give the URL it redirects to as spec.http.endpoint.url"
	}
	switch code {
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return "the endpoint does not take the request as formed: check spec.http.endpoint.body and headers against its API"
	case http.StatusUnauthorized:
		return "the request carries no credentials the endpoint accepts: put them in spec.http.endpoint.headers " +
			"(an Authorization or API-key header; {device} makes one per device) or spec.identity's username and password (HTTP Basic)"
	case http.StatusForbidden:
		return "the endpoint knows the device but does not let it post here: check the device's rights for this URL and method"
	case http.StatusNotFound:
		return "no such resource: check spec.http.endpoint.url (its path, and the {device} or {topic} in it)"
	case http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return "the endpoint does not take this method at this URL: check spec.http.endpoint.method and url"
	case http.StatusRequestEntityTooLarge:
		return "the request's body is larger than the endpoint takes: lower workload.payloadBytes, or check spec.http.endpoint.body"
	case http.StatusUnsupportedMediaType:
		return "the endpoint does not take the body's type: set Content-Type in spec.http.endpoint.headers to what it reads"
	case http.StatusTooManyRequests:
		return "the endpoint is limiting the rate: it takes less than workload.rate (per device or in all); lower the rate, or find its capacity (docs/capacity.md)"
	case http.StatusServiceUnavailable:
		return "the endpoint is unavailable or overloaded: lower workload.rate, or find its capacity (docs/capacity.md)"
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		return "a proxy in front of the endpoint could not reach it (in time): check the service behind the proxy"
	}
	if code >= 500 {
		return "the endpoint failed on the request: its own logs say why"
	}
	return "the endpoint refused the request: check spec.http.endpoint (url, method, headers, body) against its API"
}

// quoteBody is the start of a body as a quoted single line: up to 160 characters of text, with
// runs of white space and control characters made one space; "" for an empty or binary body.
func quoteBody(body []byte) string {
	s := strings.ToValidUTF8(string(body), "\uFFFD")
	if strings.Count(s, "\uFFFD") > len(s)/8 {
		return ""
	}
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:160]) + "…"
	}
	if s == "" {
		return ""
	}
	return fmt.Sprintf("%q", s)
}
