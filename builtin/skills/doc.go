// Package skills holds skills_list, skill_view and skill_manage.
//
// # Skills
//
// skills_list and skill_view read the skills index of the core directory
// (Deps.CoreDir) through core.Load. skill_manage changes the skills root
// (Deps.SkillsDir, inside the core) transactionally: it applies the
// change, calls Deps.CoreLoader, and when the core no longer loads undoes
// the change exactly (replaced files come back as the same inode, new files
// and directories are removed) and answers "skill <action> rolled back
// because core load failed: <error>".
package skills
