import type { MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";

/** A generated protobuf-es service descriptor. */
export type AnyService = GenService<GenServiceMethods>;
type Methods<S extends AnyService> = S["method"];
export type MethodName<S extends AnyService> = keyof Methods<S> & string;
/** "unary", "client_streaming", "server_streaming" or "bidi_streaming", as the .proto declares. */
export type KindOf<S extends AnyService, K extends MethodName<S>> = Methods<S>[K]["methodKind"];
export type RequestOf<S extends AnyService, K extends MethodName<S>> = MessageShape<Methods<S>[K]["input"]>;
export type RequestInitOf<S extends AnyService, K extends MethodName<S>> = MessageInitShape<Methods<S>[K]["input"]>;
export type ResponseOf<S extends AnyService, K extends MethodName<S>> = MessageShape<Methods<S>[K]["output"]>;
export type ResponseInitOf<S extends AnyService, K extends MethodName<S>> = MessageInitShape<Methods<S>[K]["output"]>;
