module github.com/caddy-a2a/caddy-a2a/bench

go 1.26.0

replace github.com/caddy-a2a/caddy-a2a => ../

require github.com/a2aproject/a2a-go/v2 v2.4.0

require (
	github.com/google/uuid v1.6.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
)
