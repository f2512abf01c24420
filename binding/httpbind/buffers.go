package httpbind

import "sync"

// maxPooledBuf is the largest buffer kept for reuse: a rare huge response
// must not pin its memory in the pool for the life of the process.
const maxPooledBuf = 64 << 10

var bufPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 2048)
	return &b
}}

// GetBuf returns an empty pooled buffer; give it back with PutBuf.
func GetBuf() *[]byte {
	b := bufPool.Get().(*[]byte)
	*b = (*b)[:0]
	return b
}

// PutBuf returns b to the pool unless it grew too large to keep.
func PutBuf(b *[]byte) {
	if cap(*b) > maxPooledBuf {
		return
	}
	bufPool.Put(b)
}
