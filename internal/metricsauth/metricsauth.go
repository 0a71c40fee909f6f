// Package metricsauth lets only callers the API server authenticates and authorizes read the
// operator's metrics: the same checks as controller-runtime's
// filters.WithAuthenticationAndAuthorization (which kubebuilder's cmd/main.go uses), made with
// client-go alone. That package builds k8s.io/apiserver's delegating authenticator, which brings
// 14 more modules (gRPC, OpenTelemetry's SDK and exporters, …) into the binary for two API calls.
//
// A request must carry a bearer token. A TokenReview says whose it is; a SubjectAccessReview
// then asks whether that user may do the request's verb (get for GET) on its path, a
// non-resource URL (/metrics). Scraping therefore needs a role such as
//
//	rules: [{nonResourceURLs: ["/metrics"], verbs: ["get"]}]
//
// bound to the scraper's ServiceAccount, and the operator needs create on
// authentication.k8s.io tokenreviews and authorization.k8s.io subjectaccessreviews.
// Answers are cached per token and path for a minute (a denial for ten seconds), so a scrape
// every few seconds costs the API server nothing more.
package metricsauth

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// How long a decision is reused, and how many are kept.
const (
	allowTTL   = time.Minute
	denyTTL    = 10 * time.Second
	maxEntries = 1024
)

// FilterProvider is a metricsserver.Options.FilterProvider.
func FilterProvider(cfg *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	cs, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return New(cs), nil
}

// New is the filter, asking the API server through cs.
func New(cs kubernetes.Interface) metricsserver.Filter {
	a := &authorizer{cs: cs, cache: map[key]entry{}}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			status, msg := a.check(r)
			if status != http.StatusOK {
				log.V(4).Info("metrics request refused", "status", status, "reason", msg)
				http.Error(w, msg, status)
				return
			}
			next.ServeHTTP(w, r)
		}), nil
	}
}

type key struct{ token, verb, path string }

type entry struct {
	status  int
	msg     string
	expires time.Time
}

type authorizer struct {
	cs    kubernetes.Interface
	mu    sync.Mutex
	cache map[key]entry
}

// check returns 200, or the status and message to answer with.
func (a *authorizer) check(r *http.Request) (int, string) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(token) == "" {
		return http.StatusUnauthorized, "Unauthorized: a bearer token is required"
	}
	k := key{token: strings.TrimSpace(token), verb: strings.ToLower(r.Method), path: r.URL.Path}
	now := time.Now()
	a.mu.Lock()
	e, hit := a.cache[k]
	a.mu.Unlock()
	if hit && now.Before(e.expires) {
		return e.status, e.msg
	}
	status, msg, final := a.review(r.Context(), k)
	if final {
		ttl := allowTTL
		if status != http.StatusOK {
			ttl = denyTTL
		}
		a.mu.Lock()
		if len(a.cache) >= maxEntries {
			clear(a.cache)
		}
		a.cache[k] = entry{status: status, msg: msg, expires: now.Add(ttl)}
		a.mu.Unlock()
	}
	return status, msg
}

// review asks the API server; final is false when it could not answer (not cached).
func (a *authorizer) review(ctx context.Context, k key) (status int, msg string, final bool) {
	tr, err := a.cs.AuthenticationV1().TokenReviews().Create(ctx,
		&authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: k.token}}, metav1.CreateOptions{})
	if err != nil {
		return http.StatusInternalServerError, "Authentication failed: " + err.Error(), false
	}
	if !tr.Status.Authenticated {
		return http.StatusUnauthorized, "Unauthorized", true
	}
	u := tr.Status.User
	extra := make(map[string]authzv1.ExtraValue, len(u.Extra))
	for name, v := range u.Extra {
		extra[name] = authzv1.ExtraValue(v)
	}
	sar, err := a.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
		NonResourceAttributes: &authzv1.NonResourceAttributes{Path: k.path, Verb: k.verb},
	}}, metav1.CreateOptions{})
	if err != nil {
		return http.StatusInternalServerError, "Authorization for user " + u.Username + " failed: " + err.Error(), false
	}
	if !sar.Status.Allowed || sar.Status.Denied {
		return http.StatusForbidden, "Authorization denied for user " + u.Username, true
	}
	return http.StatusOK, "", true
}
