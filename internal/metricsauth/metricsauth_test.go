package metricsauth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// fakeAPIServer knows two tokens: "reader" may get /metrics, "other" may not; "down" makes the
// TokenReview fail.
func fakeAPIServer(reviews *atomic.Int32) *fake.Clientset {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		reviews.Add(1)
		tr := a.(k8stesting.CreateAction).GetObject().(*authnv1.TokenReview)
		switch tr.Spec.Token {
		case "down":
			return true, nil, errors.New("connection refused")
		case "reader", "other":
			tr.Status = authnv1.TokenReviewStatus{Authenticated: true, User: authnv1.UserInfo{Username: "system:serviceaccount:m:" + tr.Spec.Token}}
		}
		return true, tr, nil
	})
	cs.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		reviews.Add(1)
		sar := a.(k8stesting.CreateAction).GetObject().(*authzv1.SubjectAccessReview)
		na := sar.Spec.NonResourceAttributes
		sar.Status.Allowed = sar.Spec.User == "system:serviceaccount:m:reader" && na != nil && na.Path == "/metrics" && na.Verb == "get"
		return true, sar, nil
	})
	return cs
}

func TestFilter(t *testing.T) {
	var reviews atomic.Int32
	h, err := New(fakeAPIServer(&reviews))(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("metrics"))
	}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, header, method, path string
		want                       int
	}{
		{"no token", "", "GET", "/metrics", http.StatusUnauthorized},
		{"not a bearer token", "Basic dXNlcjpwYXNz", "GET", "/metrics", http.StatusUnauthorized},
		{"unknown token", "Bearer nobody", "GET", "/metrics", http.StatusUnauthorized},
		{"token without the role", "Bearer other", "GET", "/metrics", http.StatusForbidden},
		{"token with the role", "Bearer reader", "GET", "/metrics", http.StatusOK},
		{"another path", "Bearer reader", "GET", "/debug", http.StatusForbidden},
		{"another verb", "Bearer reader", "POST", "/metrics", http.StatusForbidden},
		{"API server down", "Bearer down", "GET", "/metrics", http.StatusInternalServerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("%d, want %d: %s", rec.Code, tc.want, rec.Body)
			}
			if (rec.Code == http.StatusOK) != (rec.Body.String() == "metrics") {
				t.Errorf("body %q with status %d", rec.Body, rec.Code)
			}
		})
	}

	// Answers are reused: ten scrapes by the reader cost no review; a failed review is not kept.
	before := reviews.Load()
	for range 10 {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Authorization", "Bearer reader")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("cached scrape: %d", rec.Code)
		}
	}
	if n := reviews.Load() - before; n != 0 {
		t.Errorf("10 scrapes with a known token made %d reviews, want 0", n)
	}
	before = reviews.Load()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Authorization", "Bearer down")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if n := reviews.Load() - before; n != 1 {
		t.Errorf("a token whose review failed was answered from the cache (%d reviews)", n)
	}
}
