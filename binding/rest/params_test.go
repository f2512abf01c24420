package rest

import (
	"net/url"
	"testing"
)

// TestQueryParamSpellings: a query parameter may be named as A2A 1.0 §11
// names it (camelCase) or as the proto's field (snake_case, what
// gRPC-to-HTTP transcoding accepts); both spellings of one member are
// that member twice, and any other name is refused.
func TestQueryParamSpellings(t *testing.T) {
	for _, tc := range []struct {
		query string
		known map[string]queryParam
		want  string // the params members, or the refused field
		err   bool
	}{
		{"historyLength=1", getTaskQuery, `,"historyLength":"1"`, false},
		{"history_length=1", getTaskQuery, `,"historyLength":"1"`, false},
		{"history_length=1&historyLength=2", getTaskQuery, "historyLength", true},
		{"historylength=1", getTaskQuery, "historylength", true},
		{"page_size=5&context_id=c&include_artifacts=true", listTasksQuery, `,"contextId":"c","includeArtifacts":true,"pageSize":"5"`, false},
		{"page_token=x&status_timestamp_after=2026-01-01T00:00:00Z", listTasksQuery, `,"pageToken":"x","statusTimestampAfter":"2026-01-01T00:00:00Z"`, false},
		{"lastUpdatedAfter=a&status_timestamp_after=b", listTasksQuery, "statusTimestampAfter", true},
	} {
		q, err := url.ParseQuery(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		got, perr := queryParams(nil, q, tc.known)
		switch {
		case tc.err && (perr == nil || len(perr.Violations) != 1 || perr.Violations[0].Field != tc.want):
			t.Errorf("%s: %v, want -32602 naming %s", tc.query, perr, tc.want)
		case !tc.err && (perr != nil || string(got) != tc.want):
			t.Errorf("%s: %s %v, want %s", tc.query, got, perr, tc.want)
		}
	}
}
