//! Who writes, when a book is served by the hub: the reviewer its sign-in names ([`Reviewer`],
//! put into each request's extensions by the hub's front, never read from a request body), what
//! each role may do ([`Reviewer::may`]), and the [`Gate`] every write of a hub's book goes
//! through (the hub commits and pushes it before the answer).
//!
//! Owns: the reviewer, the roles and their rights. Calls: nothing (the store is read by `api`).

use super::answer::{Answer, ApiError};

/// A reviewer's role on the hub.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Comments, replies, edits and deletes their own messages.
    Reviewer,
    /// Also resolves, approves, reopens, holds and applies suggestions.
    Maintainer,
}

/// A signed-in reviewer, as the hub's sign-in gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reviewer {
    /// Their name (shown on their messages).
    pub name: String,
    /// Their email (what makes them who they are).
    pub email: String,
    /// Their role.
    pub role: Role,
}

/// What a write asks to do, for [`Reviewer::may`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Right {
    /// A new comment, or a reply.
    Comment,
    /// Edit or delete a message whose author is `owner`, or take back a change to it.
    Own,
    /// Change a comment's status, resolution or hold; apply a suggestion.
    Decide,
}

impl Reviewer {
    /// `Name <email>`: the author of their messages and commits.
    pub fn author(&self) -> String {
        format!("{} <{}>", self.name, self.email)
    }

    /// Whether they wrote a message whose author field is `author` (the email decides; a
    /// message without one is nobody's).
    pub fn wrote(&self, author: &str) -> bool {
        let email = author
            .rsplit_once('<')
            .and_then(|(_, rest)| rest.strip_suffix('>'))
            .map(str::trim);
        email.is_some_and(|e| e.eq_ignore_ascii_case(&self.email))
    }

    /// Whether they may do `right` on a comment whose first message is by `owner`.
    pub fn may(&self, right: Right, owner: Option<&str>) -> bool {
        match right {
            Right::Comment => true,
            Right::Own => owner.is_some_and(|o| self.wrote(o)),
            Right::Decide => self.role == Role::Maintainer,
        }
    }
}

/// What every write of a book the hub serves goes through: `write` changes the store; the gate
/// runs it and makes it durable (a commit by `who`, pushed) before its answer is given. An
/// error is the answer (a 503 when the push gave up: nothing is claimed).
pub(crate) trait Gate: Send + Sync {
    /// Runs `write` as `who`; `describe` names what its answer says it did, in one line (the
    /// commit's message).
    fn write(
        &self,
        who: &Reviewer,
        describe: &dyn Fn(&Answer) -> String,
        write: &mut dyn FnMut() -> Result<Answer, ApiError>,
    ) -> Result<Answer, ApiError>;

    /// Why this book takes no writes (a branch the hub cannot push to), if it takes none.
    fn read_only(&self) -> Option<String>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reviewer_owns_what_their_email_wrote_and_decides_only_as_maintainer() {
        let ann = Reviewer {
            name: "Ann".into(),
            email: "ann@example.org".into(),
            role: Role::Reviewer,
        };
        assert!(ann.may(Right::Own, Some("Ann Other <ANN@example.org>")));
        assert!(!ann.may(Right::Own, Some("Ann <bob@example.org>")));
        assert!(!ann.may(Right::Own, Some("ann@example.org")));
        assert!(!ann.may(Right::Own, None));
        assert!(ann.may(Right::Comment, None));
        assert!(!ann.may(Right::Decide, None));
        let max = Reviewer {
            role: Role::Maintainer,
            ..ann.clone()
        };
        assert!(max.may(Right::Decide, None));
        assert_eq!(max.author(), "Ann <ann@example.org>");
    }
}
