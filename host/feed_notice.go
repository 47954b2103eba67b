package host

import (
	"fmt"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/turn"
)

// Notice levels of FeedItem.Notice.
const (
	NoticeInfo    = "info"
	NoticeWarning = "warning"
	NoticeError   = "error"
)

// Notice is the line a transcript shows for the item, when it is one a
// transcript shows:
//
//   - a background task's completion (task.completion_ready, FeedTask or
//     FeedChild): "background task <task_id> <status>: <summary>", the
//     summary shortened to 100 characters (spec surfaces §2.13);
//   - a schedule run's end (FeedSchedule): "schedule <core>/<schedule> run
//     completed" or "schedule <core>/<schedule> run failed: <error>".
//
// level is NoticeInfo, or NoticeWarning for a task that did not succeed
// and NoticeError for a failed schedule run.
func (it FeedItem) Notice() (text, level string, ok bool) {
	e := it.Event
	switch e.Type {
	case demiurge.EvTaskCompletionReady:
		p, decoded := payload[demiurge.TaskCompletionReadyPayload](e)
		if !decoded {
			return "", "", false
		}
		level = NoticeInfo
		if p.Status != demiurge.TaskSucceeded {
			level = NoticeWarning
		}
		text = fmt.Sprintf("background task %s %s", p.TaskID, p.Status)
		if p.Summary != "" {
			text += ": " + turn.Shorten(p.Summary, 100)
		}
		return text, level, true
	case demiurge.EvSchedulerCompleted, demiurge.EvSchedulerError:
		in := schedulerInstance(e)
		if in.CoreID == "" {
			return "", "", false
		}
		name := in.CoreID + "/" + in.ScheduleID
		if e.Type == demiurge.EvSchedulerCompleted {
			return "schedule " + name + " run completed", NoticeInfo, true
		}
		msg := in.Error
		if msg == "" {
			msg = in.Reason
		}
		text = "schedule " + name + " run failed"
		if msg != "" {
			text += ": " + turn.Shorten(msg, 100)
		}
		return text, NoticeError, true
	}
	return "", "", false
}
