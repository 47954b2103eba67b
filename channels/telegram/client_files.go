package telegram

import (
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
)

// fileTimeout bounds one file download or upload.
const fileTimeout = 2 * time.Minute

// TooLargeError is an attachment refused for its size: declared by
// Telegram or found while downloading it. Nothing of it is kept.
type TooLargeError struct {
	Size, Max int64 // Size is -1 when only known to exceed Max
}

func (e *TooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("telegram attachment is too large (more than %d bytes, max %d)", e.Max, e.Max)
	}
	return fmt.Sprintf("telegram attachment is too large (%d bytes, max %d)", e.Size, e.Max)
}

// download copies the file at filePath (from getFile) to w: GET
// <base>/file/bot<token>/<file_path>. More than limit bytes is a
// *TooLargeError (w then holds a prefix the caller discards). Errors never
// carry the URL, which holds the token.
func (c *client) download(ctx context.Context, filePath string, w io.Writer, limit int64) (int64, error) {
	const method = "file download"
	segs := strings.Split(filePath, "/")
	for i, s := range segs {
		if s == "" || s == "." || s == ".." {
			return 0, &APIError{Method: method, Code: http.StatusBadRequest, Description: "getFile answered an unusable file_path"}
		}
		segs[i] = url.PathEscape(s)
	}
	rctx, cancel := context.WithTimeout(ctx, fileTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, c.base+"/file/bot"+c.token+"/"+strings.Join(segs, "/"), nil)
	if err != nil {
		return 0, demiurge.Errorf(demiurge.ECONFIG, "telegram api_base_url is not a usable URL")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, c.transport(method, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, &APIError{Method: method, Code: resp.StatusCode, Description: http.StatusText(resp.StatusCode)}
	}
	if resp.ContentLength > limit {
		return 0, &TooLargeError{Size: resp.ContentLength, Max: limit}
	}
	n, err := io.Copy(w, io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return n, &transportError{Method: method, Sent: true, Err: err}
	}
	if n > limit {
		return n, &TooLargeError{Size: -1, Max: limit}
	}
	return n, nil
}

// upload is one file of a multipart call.
type upload struct {
	field, filename, contentType string
	open                         func() (io.ReadCloser, error)
}

// upload runs method as a multipart/form-data request: params as fields,
// then the file, streamed from f.open (no copy is held in memory).
func (c *client) upload(ctx context.Context, method string, params url.Values, f upload, out any) error {
	body, err := f.open()
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		defer body.Close()
		err := writeMultipart(mw, params, f, body)
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	rctx, cancel := context.WithTimeout(ctx, fileTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, c.base+"/bot"+c.token+"/"+method, pr)
	if err != nil {
		pr.CloseWithError(err)
		return demiurge.Errorf(demiurge.ECONFIG, "telegram api_base_url is not a usable URL")
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	err = c.roundTrip(req, method, out)
	pr.CloseWithError(io.ErrClosedPipe) // ends the writer if the request ended early
	return err
}

func writeMultipart(mw *multipart.Writer, params url.Values, f upload, body io.Reader) error {
	for k, vs := range params {
		for _, v := range vs {
			if err := mw.WriteField(k, v); err != nil {
				return err
			}
		}
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": f.field, "filename": f.filename}))
	h.Set("Content-Type", f.contentType)
	part, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = io.Copy(part, body)
	return err
}

// contentType is the media type of a file to upload: the one given, else
// the one its name suggests, else application/octet-stream.
func contentType(given, name string) string {
	if given != "" {
		return given
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}
