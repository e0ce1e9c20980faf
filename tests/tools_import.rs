//! Tool import: OpenAPI 3 operations (OpenAI Actions) and LangChain tool JSON, including
//! hostile documents.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Map, Value, json};
use skills::core::tools::import::{
    ImportOptions, ParameterLocation, from_langchain, from_langchain_value, from_openapi,
    from_openapi_value,
};
use skills::core::tools::{ExportOptions, ImportError, ToolFormat, export};

const PETSTORE: &str = r##"
openapi: 3.0.3
info:
  title: Petstore
  version: "1.0"
servers:
  - url: https://pets.example.com/v1
paths:
  /pets:
    get:
      operationId: listPets
      summary: List all pets.
      description: Returns at most `limit` pets, newest first.
      parameters:
        - name: limit
          in: query
          description: How many pets to return.
          schema: {type: integer, format: int32, minimum: 1, maximum: 100, default: 20}
        - name: X-Request-Id
          in: header
          schema: {type: string, format: uuid}
    post:
      operationId: createPet
      summary: Create a pet.
      requestBody:
        $ref: "#/components/requestBodies/NewPet"
  /pets/{petId}:
    parameters:
      - $ref: "#/components/parameters/PetId"
    get:
      operationId: showPetById
      summary: Info for a specific pet.
      responses:
        "200":
          description: The pet.
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Pet"}
    delete:
      summary: Delete a pet.
      x-openai-isConsequential: true
components:
  parameters:
    PetId:
      name: petId
      in: path
      required: true
      description: The id of the pet.
      schema: {type: string}
  requestBodies:
    NewPet:
      required: true
      content:
        application/json:
          schema: {$ref: "#/components/schemas/NewPet"}
  schemas:
    NewPet:
      type: object
      required: [name]
      properties:
        name: {type: string, example: Rex}
        tag: {type: string, nullable: true}
        kind: {type: string, enum: [cat, dog], nullable: true}
        weight: {type: number, minimum: 0, exclusiveMinimum: true}
    Pet:
      allOf:
        - $ref: "#/components/schemas/NewPet"
        - type: object
          properties:
            id: {type: integer, format: int64}
"##;

#[test]
fn petstore_operations_become_tools() {
    let import = from_openapi(PETSTORE.as_bytes(), &ImportOptions::default()).unwrap();
    assert!(import.skipped.is_empty(), "{:?}", import.skipped);
    let summary: Vec<(String, String, String)> = import
        .operations
        .iter()
        .map(|op| {
            (
                op.tool.name().to_owned(),
                op.method.clone(),
                op.path.clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("listPets", "GET", "/pets"),
            ("createPet", "POST", "/pets"),
            ("showPetById", "GET", "/pets/{petId}"),
            ("delete_pets_petId", "DELETE", "/pets/{petId}"),
        ]
        .map(|(a, b, c)| (a.to_owned(), b.to_owned(), c.to_owned()))
    );
    let list = &import.operations[0];
    assert_eq!(list.locations["limit"], ParameterLocation::Query);
    assert_eq!(list.locations["X-Request-Id"], ParameterLocation::Header);
    let create = &import.operations[1];
    assert_eq!(create.locations["name"], ParameterLocation::BodyProperty);
    assert!(
        create
            .tool
            .validate_input(&json!({"name": "Rex", "tag": null, "kind": null, "weight": 1.5}))
            .is_ok()
    );
    let errors = create
        .tool
        .validate_input(&json!({"kind": "fish", "weight": 0}))
        .unwrap_err();
    let paths: Vec<&str> = errors
        .as_slice()
        .iter()
        .map(|v| v.instance_path.as_str())
        .collect();
    assert_eq!(paths, ["", "/kind", "/weight"]);
    assert_eq!(
        import.operations[2].locations["petId"],
        ParameterLocation::Path
    );

    let tools = import.into_tools();
    let mcp = export(
        &tools,
        ToolFormat::Mcp,
        &ExportOptions::new().skill("petstore"),
    )
    .unwrap();
    insta::assert_snapshot!("petstore_mcp", serde_json::to_string_pretty(&mcp).unwrap());
    // Every imported tool also passes OpenAI strict mode here.
    let strict = export(
        &tools,
        ToolFormat::OpenAiResponses,
        &ExportOptions::new().strict(true),
    )
    .unwrap();
    assert_eq!(strict.as_array().unwrap().len(), 4);
}

#[test]
fn json_and_yaml_read_the_same() {
    let options = ImportOptions::default();
    let yaml = from_openapi(PETSTORE.as_bytes(), &options).unwrap();
    let json = petstore_json();
    let text = serde_json::to_vec_pretty(&json).unwrap();
    assert_eq!(yaml, from_openapi(&text, &options).unwrap());
    assert_eq!(yaml, from_openapi_value(&json, &options).unwrap());
}

/// [`PETSTORE`] written as JSON.
fn petstore_json() -> Value {
    json!({
      "openapi": "3.0.3",
      "info": {"title": "Petstore", "version": "1.0"},
      "servers": [{"url": "https://pets.example.com/v1"}],
      "paths": {
        "/pets": {
          "get": {
            "operationId": "listPets",
            "summary": "List all pets.",
            "description": "Returns at most `limit` pets, newest first.",
            "parameters": [
              {"name": "limit", "in": "query", "description": "How many pets to return.",
               "schema": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 100, "default": 20}},
              {"name": "X-Request-Id", "in": "header", "schema": {"type": "string", "format": "uuid"}}
            ]
          },
          "post": {"operationId": "createPet", "summary": "Create a pet.",
                   "requestBody": {"$ref": "#/components/requestBodies/NewPet"}}
        },
        "/pets/{petId}": {
          "parameters": [{"$ref": "#/components/parameters/PetId"}],
          "get": {"operationId": "showPetById", "summary": "Info for a specific pet.",
                  "responses": {"200": {"description": "The pet.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}}},
          "delete": {"summary": "Delete a pet.", "x-openai-isConsequential": true}
        }
      },
      "components": {
        "parameters": {"PetId": {"name": "petId", "in": "path", "required": true, "description": "The id of the pet.", "schema": {"type": "string"}}},
        "requestBodies": {"NewPet": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}}}},
        "schemas": {
          "NewPet": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "example": "Rex"},
            "tag": {"type": "string", "nullable": true},
            "kind": {"type": "string", "enum": ["cat", "dog"], "nullable": true},
            "weight": {"type": "number", "minimum": 0, "exclusiveMinimum": true}
          }},
          "Pet": {"allOf": [{"$ref": "#/components/schemas/NewPet"}, {"type": "object", "properties": {"id": {"type": "integer", "format": "int64"}}}]}
        }
      }
    })
}

fn openapi(paths: Value, schemas: Value) -> Value {
    json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": paths,
           "components": {"schemas": schemas}})
}

fn post_body(schema_ref: &str) -> Value {
    json!({"/x": {"post": {"operationId": "op", "requestBody": {"required": true,
        "content": {"application/json": {"schema": {"$ref": schema_ref}}}}}}})
}

#[test]
fn ref_cycles_are_refused_with_their_path() {
    let direct = openapi(
        post_body("#/components/schemas/Node"),
        json!({"Node": {"type": "object", "properties": {"child": {"$ref": "#/components/schemas/Node"}}}}),
    );
    let indirect = openapi(
        post_body("#/components/schemas/A"),
        json!({
            "A": {"type": "object", "properties": {"b": {"$ref": "#/components/schemas/B"}}},
            "B": {"type": "array", "items": {"$ref": "#/components/schemas/A"}}
        }),
    );
    let to_itself = openapi(
        post_body("#/components/schemas/Self"),
        json!({"Self": {"$ref": "#/components/schemas/Self"}}),
    );
    for (doc, at) in [
        (direct, "/components/schemas/Node/properties/child/$ref"),
        (indirect, "/components/schemas/B/items/$ref"),
        (to_itself, "/components/schemas/Self/$ref"),
    ] {
        let import = from_openapi_value(&doc, &ImportOptions::default()).unwrap();
        assert!(import.operations.is_empty());
        match &import.skipped[0] {
            ImportError::RefCycle { path, .. } => assert_eq!(path, at),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn references_are_local_and_must_exist() {
    for (reference, fragment) in [
        ("https://evil.example/schema.json", "only local"),
        ("#/components/schemas/Missing", "nothing in the document"),
        ("#components", "only local"),
        ("other.yaml#/x", "only local"),
    ] {
        let doc = openapi(post_body(reference), json!({}));
        let import = from_openapi_value(&doc, &ImportOptions::default()).unwrap();
        match &import.skipped[0] {
            ImportError::Ref { message, path, .. } => {
                assert!(message.contains(fragment), "{reference}: {message}");
                assert_eq!(
                    path,
                    "/paths/~1x/post/requestBody/content/application~1json/schema/$ref"
                );
            }
            other => panic!("{reference}: {other:?}"),
        }
    }
}

#[test]
fn expansion_is_bounded() {
    // Each schema references the previous twice: 2^40 nodes if expanded.
    let mut schemas = Map::new();
    schemas.insert("S0".into(), json!({"type": "string"}));
    for i in 1..=40 {
        let prev = format!("#/components/schemas/S{}", i - 1);
        schemas.insert(
            format!("S{i}"),
            json!({"type": "object", "properties": {"l": {"$ref": prev}, "r": {"$ref": prev}}}),
        );
    }
    let doc = openapi(
        post_body("#/components/schemas/S40"),
        Value::Object(schemas),
    );
    let import = from_openapi_value(&doc, &ImportOptions::default()).unwrap();
    assert!(matches!(import.skipped[0], ImportError::Limit { .. }));

    // A long chain of `$ref`s.
    let mut chain = Map::new();
    for i in 0..100 {
        chain.insert(
            format!("C{i}"),
            json!({"$ref": format!("#/components/schemas/C{}", i + 1)}),
        );
    }
    chain.insert("C100".into(), json!({"type": "object"}));
    let doc = openapi(post_body("#/components/schemas/C0"), Value::Object(chain));
    let import = from_openapi_value(&doc, &ImportOptions::default()).unwrap();
    assert!(matches!(import.skipped[0], ImportError::Limit { .. }));
}

#[test]
fn huge_and_deep_documents_are_refused() {
    let options = ImportOptions::default();
    let huge = vec![b' '; options.max_bytes + 1];
    assert!(matches!(
        from_openapi(&huge, &options),
        Err(ImportError::TooLarge { .. })
    ));
    let deep_json = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(matches!(
        from_openapi(deep_json.as_bytes(), &options),
        Err(ImportError::Syntax(_))
    ));
    let deep_yaml = format!(
        "openapi: 3.0.0\npaths: {}{}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    assert!(from_openapi(deep_yaml.as_bytes(), &options).is_err());
    // Deep but parseable: a schema nested 60 levels is still too deep for a tool.
    let mut schema = json!({"type": "string"});
    for _ in 0..60 {
        schema = json!({"type": "object", "properties": {"a": schema}});
    }
    let doc = openapi(
        json!({"/x": {"post": {"requestBody": {"content": {"application/json": {"schema": schema}}}}}}),
        json!({}),
    );
    let import = from_openapi_value(&doc, &options).unwrap();
    assert!(
        matches!(import.skipped[0], ImportError::Limit { .. }),
        "{:?}",
        import.skipped
    );
    // The YAML billion laughs.
    let mut bomb = String::from("openapi: 3.0.0\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..9 {
        bomb.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            vec![format!("*a{}", i - 1); 10].join(", ")
        ));
    }
    assert!(from_openapi(bomb.as_bytes(), &options).is_err());
    // Too many operations.
    let many: Map<String, Value> = (0..=options.max_tools)
        .map(|i| (format!("/p{i}"), json!({"get": {}})))
        .collect();
    assert!(matches!(
        from_openapi_value(&openapi(Value::Object(many), json!({})), &options),
        Err(ImportError::Limit { .. })
    ));
}

#[test]
fn wrong_types_are_errors_with_paths_never_panics() {
    let options = ImportOptions::default();
    let bad_documents = [
        (json!("openapi"), Some("")),
        (json!({"openapi": "2.0"}), Some("/openapi")),
        (json!({"openapi": "3.0.0", "paths": "x"}), Some("/paths")),
    ];
    for (doc, path) in bad_documents {
        assert_eq!(from_openapi_value(&doc, &options).unwrap_err().path(), path);
    }
    let bad_operations = [
        (json!({"/a": 5}), "/paths/~1a"),
        (json!({"/a": {"get": []}}), "/paths/~1a/get"),
        (
            json!({"/a": {"get": {"operationId": 7}}}),
            "/paths/~1a/get/operationId",
        ),
        (
            json!({"/a": {"get": {"parameters": {}}}}),
            "/paths/~1a/get/parameters",
        ),
        (
            json!({"/a": {"get": {"parameters": [7]}}}),
            "/paths/~1a/get/parameters/0",
        ),
        (
            json!({"/a": {"get": {"parameters": [{"in": "query"}]}}}),
            "/paths/~1a/get/parameters/0/name",
        ),
        (
            json!({"/a": {"get": {"parameters": [{"name": "q", "in": "query"}]}}}),
            "/paths/~1a/get/parameters/0",
        ),
        (
            json!({"/a": {"get": {"parameters": [{"name": "q", "in": "query", "schema": 5}]}}}),
            "/paths/~1a/get/parameters/0/schema",
        ),
        (
            json!({"/a": {"get": {"parameters": [{"name": "q", "in": "query", "schema": {"type": 5}}]}}}),
            "/paths/~1a/get",
        ),
        (
            json!({"/a": {"post": {"requestBody": {"content": 1}}}}),
            "/paths/~1a/post/requestBody",
        ),
        (
            json!({"/{}": {"get": {"operationId": "!!!"}}}),
            "/paths/~1{}/get",
        ),
        (
            json!({"/a": {"get": {"parameters": [
            {"name": "id", "in": "query", "schema": {}}, {"name": "id", "in": "header", "schema": {}}]}}}),
            "/paths/~1a/get/parameters/1",
        ),
    ];
    for (paths, at) in bad_operations {
        let doc = openapi(paths.clone(), json!({}));
        let import = from_openapi_value(&doc, &options).unwrap();
        assert!(import.operations.is_empty(), "{paths}");
        assert_eq!(
            import.skipped[0].path(),
            Some(at),
            "{paths}: {}",
            import.skipped[0]
        );
    }
    for garbage in [
        &b"\xff\xfe"[..],
        b"{",
        b"openapi: [",
        b"",
        b"- - -",
        b"null",
    ] {
        assert!(from_openapi(garbage, &options).is_err());
    }
}

#[test]
fn langchain_tools_in_their_shapes() {
    // As Pydantic v2 and LangChain's `convert_to_openai_tool` emit them.
    let text = r##"[
      {"name": "get_weather", "description": "Get the weather for a city.",
       "args_schema": {"title": "GetWeatherInput", "type": "object",
         "properties": {
           "city": {"title": "City", "type": "string", "description": "The city."},
           "unit": {"anyOf": [{"$ref": "#/$defs/Unit"}, {"type": "null"}], "default": null}
         },
         "required": ["city"],
         "$defs": {"Unit": {"title": "Unit", "enum": ["c", "f"], "type": "string"}}}},
      {"type": "function", "function": {"name": "multiply", "description": "Multiply a and b.",
       "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                      "required": ["a", "b"]}}},
      {"name": "lookup", "description": "Look a term up.", "args": {"term": {"title": "Term", "type": "string"},
       "limit": {"title": "Limit", "type": "integer", "default": 10}}}
    ]"##;
    let tools = from_langchain(text.as_bytes(), &ImportOptions::default()).unwrap();
    let weather = &tools[0];
    assert!(
        weather
            .validate_input(&json!({"city": "Oslo", "unit": "c"}))
            .is_ok()
    );
    let errors = weather.validate_input(&json!({"unit": "k"})).unwrap_err();
    assert_eq!(errors.len(), 2);
    assert_eq!(tools[2].input_schema()["required"], json!(["term"]));
    let anthropic = export(&tools, ToolFormat::Anthropic, &ExportOptions::new()).unwrap();
    insta::assert_snapshot!(
        "langchain_anthropic",
        serde_json::to_string_pretty(&anthropic).unwrap()
    );
    // Strict mode accepts what Pydantic emits.
    assert!(
        export(
            &tools,
            ToolFormat::OpenAiChat,
            &ExportOptions::new().strict(true)
        )
        .is_ok()
    );
}

#[test]
fn hostile_langchain_input() {
    let options = ImportOptions::default();
    for (value, at) in [
        (json!(5), Some("")),
        (json!([{"name": "ok"}, "x"]), Some("/1")),
        (
            json!({"type": "function", "function": "f"}),
            Some("/function"),
        ),
        (
            json!({"name": "t", "parameters": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}}),
            Some("/parameters"),
        ),
        (
            json!({"name": "t", "args_schema": {"type": "object", "properties": {"a": {"$ref": "https://x/y"}}}}),
            Some("/args_schema"),
        ),
        (
            json!({"name": "t", "parameters": {"type": "object", "properties": {"p": {"pattern": "((a{100}){100}){100}"}}}}),
            Some("/parameters"),
        ),
        (json!({"name": "x".repeat(65)}), Some("/name")),
    ] {
        let err = from_langchain_value(&value, &options).unwrap_err();
        assert_eq!(err.path(), at, "{value}: {err}");
    }
    let mut deep = json!({"type": "string"});
    for _ in 0..100 {
        deep = json!({"type": "object", "properties": {"a": deep}});
    }
    let err =
        from_langchain_value(&json!({"name": "t", "parameters": deep}), &options).unwrap_err();
    assert!(matches!(err, ImportError::Tool { .. }));
    let huge = vec![b'['; options.max_bytes + 1];
    assert!(matches!(
        from_langchain(&huge, &options),
        Err(ImportError::TooLarge { .. })
    ));
    assert!(matches!(
        from_langchain(b"name: t", &options),
        Err(ImportError::Syntax(_))
    ));
}
