//! `#[derive(Names)]`: an enum's variant names read from its own serde attributes
//! (`rename_all` on the enum, `rename` on a variant, with serde's rename rules), so
//! a machine's state, event and command names are its serialized tags and cannot
//! disagree with them. Re-exported as `cairn_machines::Names` (`cairn::machines::Names`).
//!
//! The derive adds two inherent items to the enum:
//!
//! * `pub const VARIANT_NAMES: &'static [&'static str]` — every variant's name, in
//!   declaration order (serde's own list of variants, which a test can pin);
//! * `pub fn variant_name(&self) -> &'static str` — this value's name.
//!
//! What would let serde's tag differ from one name is refused at compile time: an
//! untagged enum or variant, a variant serde skips or reads as `other`, and a
//! rename (or `rename_all`) with different serialize and deserialize names.

use proc_macro::TokenStream;
use proc_macro2::Span;
use quote::quote;
use syn::meta::ParseNestedMeta;
use syn::{parse_macro_input, Attribute, Data, DeriveInput, Error, LitStr, Result};

/// See the crate documentation.
#[proc_macro_derive(Names, attributes(serde))]
pub fn derive_names(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand(input: &DeriveInput) -> Result<proc_macro2::TokenStream> {
    let Data::Enum(data) = &input.data else {
        return Err(Error::new_spanned(
            &input.ident,
            "`Names` names the variants of an enum",
        ));
    };
    let container = serde_attrs(&input.attrs, Level::Enum)?;
    let rule = match &container.rename_all {
        None => Rule::None,
        Some(lit) => Rule::parse(lit)?,
    };
    let mut names = vec![];
    let mut arms = vec![];
    for v in &data.variants {
        let attrs = serde_attrs(&v.attrs, Level::Variant)?;
        let name = match attrs.rename {
            Some(lit) => lit.value(),
            None => rule.apply(&v.ident.to_string()),
        };
        let ident = &v.ident;
        arms.push(quote! { Self::#ident { .. } => #name });
        names.push(name);
    }
    let ty = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let body = if arms.is_empty() {
        quote! { match *self {} }
    } else {
        quote! { match self { #(#arms,)* } }
    };
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics #ty #ty_generics #where_clause {
            /// Every variant's name as serde writes its tag, in declaration order.
            pub const VARIANT_NAMES: &'static [&'static str] = &[#(#names),*];

            /// This variant's name as serde writes its tag.
            pub fn variant_name(&self) -> &'static str {
                #body
            }
        }
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Level {
    Enum,
    Variant,
}

#[derive(Default)]
struct SerdeAttrs {
    rename: Option<LitStr>,
    rename_all: Option<LitStr>,
}

/// The serde attributes that decide a variant's name; every other serde key is
/// skipped (its value read and dropped), and the ones that would make the tag
/// differ from one name are refused.
fn serde_attrs(attrs: &[Attribute], level: Level) -> Result<SerdeAttrs> {
    let mut out = SerdeAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            match (key.as_str(), level) {
                ("rename", Level::Variant) => {
                    out.rename = Some(one_name(&meta)?);
                    Ok(())
                }
                ("rename_all", Level::Enum) => {
                    out.rename_all = Some(one_name(&meta)?);
                    Ok(())
                }
                ("untagged", _) => {
                    Err(meta.error("`Names` needs a tag: an untagged enum or variant has none"))
                }
                ("skip" | "skip_serializing" | "skip_deserializing" | "other", Level::Variant) => {
                    Err(meta.error("`Names` needs every variant written and read under its name"))
                }
                _ => skip(&meta),
            }
        })?;
    }
    Ok(out)
}

/// `= "name"`, or `(serialize = "x", deserialize = "x")` with the same name.
fn one_name(meta: &ParseNestedMeta<'_>) -> Result<LitStr> {
    if meta.input.peek(syn::Token![=]) {
        return meta.value()?.parse();
    }
    let (mut ser, mut de) = (None, None);
    meta.parse_nested_meta(|inner| {
        let lit: LitStr = inner.value()?.parse()?;
        if inner.path.is_ident("serialize") {
            ser = Some(lit);
        } else if inner.path.is_ident("deserialize") {
            de = Some(lit);
        } else {
            return Err(inner.error("expected `serialize` or `deserialize`"));
        }
        Ok(())
    })?;
    match (ser, de) {
        (Some(s), Some(d)) if s.value() == d.value() => Ok(s),
        _ => Err(meta.error("`Names` needs one name: the same for serialize and deserialize")),
    }
}

/// Reads and drops the value of a serde key `Names` does not need.
fn skip(meta: &ParseNestedMeta<'_>) -> Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Lit = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _: proc_macro2::Group = meta.input.parse()?;
    }
    Ok(())
}

/// serde's rename rules for variants (serde_derive `internals/case.rs`).
enum Rule {
    None,
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl Rule {
    fn parse(lit: &LitStr) -> Result<Self> {
        Ok(match lit.value().as_str() {
            "lowercase" => Rule::Lower,
            "UPPERCASE" => Rule::Upper,
            "PascalCase" => Rule::Pascal,
            "camelCase" => Rule::Camel,
            "snake_case" => Rule::Snake,
            "SCREAMING_SNAKE_CASE" => Rule::ScreamingSnake,
            "kebab-case" => Rule::Kebab,
            "SCREAMING-KEBAB-CASE" => Rule::ScreamingKebab,
            other => {
                return Err(Error::new(
                    Span::call_site(),
                    format!("unknown rename rule `{other}`"),
                ))
            }
        })
    }

    fn apply(&self, variant: &str) -> String {
        match self {
            Rule::None | Rule::Pascal => variant.to_owned(),
            Rule::Lower => variant.to_ascii_lowercase(),
            Rule::Upper => variant.to_ascii_uppercase(),
            Rule::Camel => variant[..1].to_ascii_lowercase() + &variant[1..],
            Rule::Snake => {
                let mut snake = String::new();
                for (i, ch) in variant.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        snake.push('_');
                    }
                    snake.push(ch.to_ascii_lowercase());
                }
                snake
            }
            Rule::ScreamingSnake => Rule::Snake.apply(variant).to_ascii_uppercase(),
            Rule::Kebab => Rule::Snake.apply(variant).replace('_', "-"),
            Rule::ScreamingKebab => Rule::ScreamingSnake.apply(variant).replace('_', "-"),
        }
    }
}
