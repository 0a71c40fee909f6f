package loadgen

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/msgbench/msgbench/internal/mqtt"
	"github.com/msgbench/msgbench/internal/refusal"
	"github.com/msgbench/msgbench/loadgen/drivers"
)

// clientError is one client's failure; its message carries the client's name once: its group's
// (a run with spec.groups), role and index in the group.
type clientError struct {
	member
	index int
	err   error
}

// member is a role in a group ("" for a flat spec's one group).
type member struct {
	group string
	role  drivers.Role
}

// clients names the member's clients ids ("publisher 3", "subscribers 0–2 of group backend").
func (m member) clients(n int, ids string) string {
	s := m.role.String()
	if n > 1 {
		s += "s"
	}
	s += " " + ids
	if m.group != "" {
		s += " of group " + m.group
	}
	return s
}

func (e *clientError) Error() string {
	return fmt.Sprintf("%s: %v", e.clients(1, strconv.Itoa(e.index)), e.err)
}
func (e *clientError) Unwrap() error { return e.err }

// clientErr names err as client index's of role's (a flat spec's).
func clientErr(role drivers.Role, index int, err error) error {
	return &clientError{member: member{role: role}, index: index, err: err}
}

// clientErr names err as the group's client index's of role's.
func (gr *groupRun) clientErr(role drivers.Role, index int, err error) error {
	m := member{role: role}
	if gr.g.Fleet != nil {
		m.group = gr.g.Name
	}
	return &clientError{member: m, index: index, err: err}
}

// Limits of summarizeErrors' message.
const (
	maxCauses     = 4   // causes shown; the rest are counted
	maxCauseChars = 300 // one cause's text
	maxRanges     = 6   // index ranges listed per role
)

// summarizeErrors turns a run's failures into one message, cause first: the errors are grouped
// by cause (a broker gone shows as one "broker connection lost (EOF)" for all the clients it
// took, not a line per client), most common first, each with how many of the clients it hit
// and which. A client counts once, under its most telling error (the connection's loss, not the
// writes that failed on the closed connection after it). clients is how many clients the run
// had (0: unknown). Errors that are no client's (*clientError) are grouped by cause too. The
// message is bounded whatever the number of errors; "" when there are none.
func summarizeErrors(errs []error, clients int) string {
	type group struct {
		cause   string
		example string // the whole message, when the cause is only its innermost part
		who     map[member][]int
		order   []member // who's keys, first seen first
		n       int
		first   int
		// refused is the first of the group's errors when they are a refusal explained
		// (internal/refusal): its detail (which client, which packet) and advice are shown once.
		refused *refusal.Error
	}
	// One error per client: the most telling.
	type clientKey struct {
		member
		index int
	}
	best := map[clientKey]error{}
	var order []error // first appearance, clients once
	for _, err := range errs {
		if err == nil {
			continue
		}
		var ce *clientError
		if !errors.As(err, &ce) {
			order = append(order, err)
			continue
		}
		k := clientKey{ce.member, ce.index}
		prev, seen := best[k]
		if !seen {
			order = append(order, err)
		}
		if !seen || consequence(prev) && !consequence(err) {
			best[k] = err
		}
	}
	groups := map[string]*group{}
	var list []*group
	for i, err := range order {
		var ce *clientError
		isClient := errors.As(err, &ce)
		if isClient {
			err = best[clientKey{ce.member, ce.index}]
			errors.As(err, &ce)
		}
		cause, exact := errorCause(err)
		g := groups[cause]
		if g == nil {
			g = &group{cause: cause, who: map[member][]int{}, first: i}
			groups[cause] = g
			list = append(list, g)
			var re *refusal.Error
			if errors.As(err, &re) {
				g.refused = re
			}
		}
		g.n++
		if isClient {
			if _, ok := g.who[ce.member]; !ok {
				g.order = append(g.order, ce.member)
			}
			g.who[ce.member] = append(g.who[ce.member], ce.index)
			if !exact && g.example == "" {
				g.example = ce.err.Error()
			}
		} else if !exact && g.example == "" {
			g.example = err.Error()
		}
	}
	slices.SortStableFunc(list, func(a, b *group) int { return cmp.Or(b.n-a.n, a.first-b.first) })
	var parts []string
	for i, g := range list {
		if i == maxCauses {
			rest := 0
			for _, g := range list[i:] {
				rest += g.n
			}
			parts = append(parts, fmt.Sprintf("and %d more failures of %d other causes", rest, len(list)-i))
			break
		}
		var s string
		nClients := 0
		for _, ids := range g.who {
			nClients += len(ids)
		}
		switch {
		case g.refused != nil:
			parts = append(parts, truncate(refusedText(g.refused, g.order, g.who, g.n, nClients, clients), maxRefusalChars))
			continue
		case nClients == 0:
			s = g.cause
			if g.example != "" && g.example != g.cause {
				s = g.example
			}
			if g.n > 1 {
				s += fmt.Sprintf(" (%d times)", g.n)
			}
		case nClients == 1 && g.example != "":
			// One client: its whole message says more than a count.
			for m, ids := range g.who {
				if len(ids) == 1 {
					s = m.clients(1, strconv.Itoa(ids[0])) + ": " + g.example
				}
			}
		default:
			s = g.cause + clientsText(g.order, g.who, nClients, clients)
			if g.example != "" && g.example != g.cause {
				s += ", e.g. " + g.example
			}
		}
		parts = append(parts, truncate(s, maxCauseChars))
	}
	return strings.Join(parts, "; ")
}

// clientsText is " for 3 of 16 clients (publishers 0–2)", each group named in a run with groups
// (" for 2 of 9 clients (publishers 0–1 of group sensors)"), publishers before subscribers.
func clientsText(order []member, who map[member][]int, nClients, clients int) string {
	s := " for " + strconv.Itoa(nClients)
	if clients > 0 {
		s += " of " + strconv.Itoa(clients)
	}
	if nClients == 1 && clients == 0 {
		s += " client ("
	} else {
		s += " clients ("
	}
	order = slices.Clone(order)
	slices.SortStableFunc(order, func(a, b member) int { return cmp.Compare(a.role, b.role) })
	var names []string
	for _, m := range order {
		ids := who[m]
		names = append(names, m.clients(len(ids), indexRanges(ids)))
	}
	return s + strings.Join(names, ", ") + ")"
}

// maxRefusalChars bounds a refusal's part of the message: what happened, whom it hit, the first
// occurrence's detail and the advice, which says what to change and must not be cut short.
const maxRefusalChars = 3 * maxCauseChars

// refusedText is a refusal's part of the summary: what the broker said, the clients it said it
// to, the first occurrence's detail (which client, which packet), and what to change.
func refusedText(re *refusal.Error, order []member, who map[member][]int, n, nClients, clients int) string {
	s := re.What
	switch {
	case nClients > 0:
		s += clientsText(order, who, nClients, clients)
	case n > 1:
		s += fmt.Sprintf(" (%d times)", n)
	}
	if re.Detail != "" {
		if n > 1 {
			s += "; first: " + re.Detail
		} else {
			s += ": " + re.Detail
		}
	}
	if re.Advice != "" {
		s += "; " + re.Advice
	}
	return s
}

// consequence reports an error that follows from an earlier one on the same client: an
// operation on a connection or session already closed.
func consequence(err error) bool {
	return errors.Is(err, net.ErrClosed) || errors.Is(err, mqtt.ErrClosed) || errors.Is(err, drivers.ErrClosed)
}

// errorCause is what an error comes down to: a named cause for the common ways a connection
// ends (exact true), otherwise its innermost message.
func errorCause(err error) (cause string, exact bool) {
	var op *net.OpError
	connect := "" // "connect to ADDR: " when the failed operation was a dial
	if errors.As(err, &op) && op.Addr != nil {
		connect = "connect to " + op.Addr.String() + ": "
	}
	var re *refusal.Error
	switch {
	case errors.As(err, &re): // explained: the same words for every client it happened to
		return re.What + "; " + re.Advice, true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "broker connection lost (EOF)", true
	case errors.Is(err, syscall.ECONNRESET):
		return "broker connection lost (connection reset)", true
	case errors.Is(err, syscall.EPIPE):
		return "broker connection lost (broken pipe)", true
	case errors.Is(err, syscall.ECONNREFUSED):
		return connect + "connection refused", true
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return connect + "no route to the broker", true
	}
	for next := errors.Unwrap(err); next != nil; next = errors.Unwrap(err) {
		err = next
	}
	return err.Error(), false
}

// indexRanges lists indexes compactly: "0–7", "0, 2, 5–9".
func indexRanges(ids []int) string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var out []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if len(out) == maxRanges {
			out = append(out, "…")
			break
		}
		if j == i {
			out = append(out, strconv.Itoa(ids[i]))
		} else {
			out = append(out, fmt.Sprintf("%d–%d", ids[i], ids[j]))
		}
		i = j + 1
	}
	return strings.Join(out, ", ")
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// summarizedError is errors summarized in one message (summarizeErrors); errors.Is and As still
// see each of them.
type summarizedError struct {
	msg  string
	errs []error
}

func (e *summarizedError) Error() string   { return e.msg }
func (e *summarizedError) Unwrap() []error { return e.errs }

// joinSummarized is errors.Join with summarizeErrors' message; nil without errors.
func joinSummarized(errs []error, clients int) error {
	msg := summarizeErrors(errs, clients)
	if msg == "" {
		return nil
	}
	return &summarizedError{msg: msg, errs: errs}
}
