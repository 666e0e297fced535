//! The routes of the in-page editor: `GET`/`PUT page`, `POST preview` and `POST asset`, each
//! run as [`super::routes`] runs the API (off the async workers; under the hub, as the
//! signed-in reviewer, a write through the branch's gate: one commit by them).
//!
//! May call: `routes` (how a request is run and written), `page_api` (what it does).

use super::edge::{JsonBody, LargeJsonBody, Query};
use super::islands::FileChange;
use super::page_api::{AssetBody, PageBody, PreviewBody};
use super::routes::{Named, blocking_as, write};
use super::{Context, Reviewer};
use axum::body::Body;
use axum::extract::{Extension, State};
use axum::http::Response;
use serde::Deserialize;
use std::sync::Arc;

/// The largest `POST asset` request: the image in base64, and the rest.
pub(super) const ASSET_REQUEST: usize = crate::apps::ops::assets::MAX_ASSET / 3 * 4 + 64 * 1024;

/// `GET page?page=P`: the chapter's top-level blocks (under the hub, a maintainer's).
pub(super) async fn page(
    State(ctx): State<Arc<Context>>,
    who: Option<Extension<Reviewer>>,
    Query(q): Query<PageQuery>,
) -> Response<Body> {
    let who = who.map(|Extension(w)| w);
    blocking_as(ctx, who, move |_, api| api.page(q.page.as_deref())).await
}

/// `GET page?page=…`.
#[derive(Deserialize)]
pub(super) struct PageQuery {
    page: Option<String>,
}

/// `PUT page {page, block, expected, markdown, close?, note?}`: a block of the chapter edited
/// (under the hub, one commit by the editor with the comments it closes).
pub(super) async fn put_page(
    State(ctx): State<Arc<Context>>,
    who: Option<Extension<Reviewer>>,
    JsonBody(o): JsonBody<PageBody>,
) -> Response<Body> {
    let named = Named::of(Some(o.page()), None);
    write(ctx, (who, "edit"), FileChange::Changed, named, move |api| {
        api.put_page(&o)
    })
    .await
}

/// `POST preview {markdown}`: the block rendered as the build renders Markdown.
pub(super) async fn preview(
    State(ctx): State<Arc<Context>>,
    who: Option<Extension<Reviewer>>,
    JsonBody(o): JsonBody<PreviewBody>,
) -> Response<Body> {
    let who = who.map(|Extension(w)| w);
    blocking_as(ctx, who, move |_, api| api.preview(&o)).await
}

/// `POST asset {page, filename, data}`: an image written next to the chapter.
pub(super) async fn asset(
    State(ctx): State<Arc<Context>>,
    who: Option<Extension<Reviewer>>,
    LargeJsonBody(o): LargeJsonBody<AssetBody, ASSET_REQUEST>,
) -> Response<Body> {
    let named = Named::of(Some(o.page()), None);
    write(
        ctx,
        (who, "add an image to"),
        FileChange::Changed,
        named,
        move |api| api.asset(&o),
    )
    .await
}
