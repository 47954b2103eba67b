-- Counts message.updated edits per session, so a reader that keeps a window
-- of a session's messages can tell whether any message it holds changed.
ALTER TABLE sessions ADD COLUMN message_edits INTEGER NOT NULL DEFAULT 0;
