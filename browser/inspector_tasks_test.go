package browser

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestInspectorTaskList: tasks made within the same minute (their
// UUIDv7 ids start alike) are told apart in the task list, each cell
// showing the id's end, holding the whole id in its title and giving it
// whole to a copy; and the right column keeps long ids and text within
// its width, at the page's size and a narrow one.
func TestInspectorTaskList(t *testing.T) {
	tab := openInspector(t, inspectorURL+inspectorPage, nil)
	tab.waitFor("the card", `document.querySelector('#agent-name').textContent === 'Inspector test agent'`)
	long := strings.Repeat("x", 400)
	tab.send(long)
	first := tab.last("the first answer", `last.state === 'completed'`)
	tab.send("again")
	second := tab.last("the second answer", fmt.Sprintf(`last.state === 'completed' && last.id !== %q`, first.ID))
	if first.ID[:8] != second.ID[:8] {
		t.Logf("the two ids differ in their first 8 characters already: %s, %s", first.ID, second.ID)
	}

	// A slow task too, so that its row has the cancel and resubscribe
	// buttons, the widest row there is.
	tab.send("slow")
	slow := tab.last("the slow task", `last.state === 'working' || last.state === 'submitted'`)
	if err := chromedp.Do(tab.ctx, chromedp.Click("#refresh")); err != nil {
		t.Fatal(err)
	}
	tab.waitFor("the slow task's buttons", fmt.Sprintf(`!!document.querySelector('#tasks tr[data-task=%q] button.cancel')`, slow.ID))
	for _, id := range []string{first.ID, second.ID, slow.ID} {
		cell := eval[map[string]string](tab, fmt.Sprintf(`(() => { const td = document.querySelector('#tasks tr[data-task=%q] td'); return {text: td.textContent, title: td.title}; })()`, id))
		if want := "…" + id[len(id)-12:]; cell["text"] != want || cell["title"] != id {
			t.Errorf("task %s: the cell shows %q with title %q, want %q with the whole id", id, cell["text"], cell["title"], want)
		}
		copied := eval[string](tab, fmt.Sprintf(`(() => {
			const code = document.querySelector('#tasks tr[data-task=%q] td code');
			const r = document.createRange(); r.selectNodeContents(code);
			getSelection().removeAllRanges(); getSelection().addRange(r);
			const ev = new ClipboardEvent('copy', {clipboardData: new DataTransfer(), bubbles: true, cancelable: true});
			code.dispatchEvent(ev);
			return ev.clipboardData.getData('text/plain');
		})()`, id))
		if copied != id {
			t.Errorf("task %s: a copy of its cell gives %q", id, copied)
		}
	}

	// Nothing in the right column is wider than the column.
	const overflow = `(() => { const p = document.getElementById('side-panel'); return p.scrollWidth - p.clientWidth; })()`
	if over := eval[int](tab, overflow); over > 0 {
		t.Errorf("at 1400px, the right column's content is %dpx wider than it", over)
	}
	if err := chromedp.Do(tab.ctx, chromedp.EmulateViewport(1000, 800)); err != nil {
		t.Fatal(err)
	}
	if over := eval[int](tab, overflow); over > 0 {
		t.Errorf("at 1000px, the right column's content is %dpx wider than it", over)
	}
	if err := chromedp.Do(tab.ctx, chromedp.Click(fmt.Sprintf(`#tasks tr[data-task=%q] button.cancel`, slow.ID))); err != nil {
		t.Fatal(err)
	}
	tab.last("the canceled task", fmt.Sprintf(`last.id === %q && last.state === 'canceled'`, slow.ID))
	<-theInspectorAgent.aborted
}
