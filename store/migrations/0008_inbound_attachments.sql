-- The files an inbound channel message carried (a JSON list of
-- demiurge.InboundAttachment: id, kind, filename, media_type, path,
-- size_bytes, source, platform facts), stored by the channel before the
-- message was accepted. NULL: none.
ALTER TABLE channel_inbox ADD COLUMN attachments_json TEXT;
