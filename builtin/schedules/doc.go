// Package schedules holds schedule_manage, which lists and changes the
// active core's schedule files.
package schedules
