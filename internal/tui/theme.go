package tui

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// theme holds the styles of every part of the screen. The colours are the
// spec's (surfaces §2.10): the two theme colours come from config.yaml's
// ui section, the rest are fixed. Styles are written in true colour; the
// program downsamples them to what the terminal supports (256 colours, 16,
// or none under NO_COLOR).
type theme struct {
	accent color.Color // demiurge_theme_color: assistant, notices, running
	user   color.Color // user_theme_color: the "you" label and gutter
	// alignRight puts user messages at the right edge (ui.user_message_align).
	alignRight bool

	text, muted, faint, bold lipgloss.Style
	accentText, accentBold   lipgloss.Style
	userText, userBold       lipgloss.Style
	system                   lipgloss.Style
	errorText, successText   lipgloss.Style
	warningText              lipgloss.Style
	border                   lipgloss.Style
	diffAdd, diffDel, diffAt lipgloss.Style
	selected                 lipgloss.Style
}

// The fixed colours of surfaces §2.10.
var (
	colorText    = lipgloss.Color("#e8e8ea")
	colorMuted   = lipgloss.Color("#9a9aa3")
	colorFaint   = lipgloss.Color("#707078")
	colorBorder  = lipgloss.Color("#3f3f46")
	colorSystem  = lipgloss.Color("#d2a8ff")
	colorError   = lipgloss.Color("#ff7b72")
	colorSuccess = lipgloss.Color("#7ee787")
	colorCode    = lipgloss.Color("#79c0ff")
)

// Settings are the ui.* settings the screen is drawn with.
type Settings struct {
	UserMessageAlign   string // left or right
	DemiurgeThemeColor string // #rrggbb
	UserThemeColor     string // #rrggbb
}

func newTheme(s Settings) theme {
	accent := lipgloss.Color(orDefault(s.DemiurgeThemeColor, "#ff9afc"))
	user := lipgloss.Color(orDefault(s.UserThemeColor, "#9cc9ff"))
	base := lipgloss.NewStyle()
	return theme{
		accent:      accent,
		user:        user,
		alignRight:  s.UserMessageAlign == "right",
		text:        base.Foreground(colorText),
		muted:       base.Foreground(colorMuted),
		faint:       base.Foreground(colorFaint),
		bold:        base.Bold(true),
		accentText:  base.Foreground(accent),
		accentBold:  base.Foreground(accent).Bold(true),
		userText:    base.Foreground(user),
		userBold:    base.Foreground(user).Bold(true),
		system:      base.Foreground(colorSystem).Bold(true),
		errorText:   base.Foreground(colorError),
		successText: base.Foreground(colorSuccess),
		warningText: base.Foreground(accent),
		border:      base.Foreground(colorBorder),
		diffAdd:     base.Foreground(colorSuccess),
		diffDel:     base.Foreground(colorError),
		diffAt:      base.Foreground(colorCode),
		selected:    base.Foreground(colorText).Bold(true),
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
