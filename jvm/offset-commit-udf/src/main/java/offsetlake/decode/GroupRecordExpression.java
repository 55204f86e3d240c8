package offsetlake.decode;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.coordinator.group.generated.CoordinatorRecordType;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Spark SQL function {@code offsetlake_decode_group_record(key, value)}: a KIP-848 consumer-group,
 * KIP-932 share-group or KIP-1071 streams-group record (key types 3-23,
 * schemas.decoded_records.NEWER_GROUP_RECORD_TYPES), parsed by Kafka's own generated classes, chosen by
 * Kafka's own registry of record types ({@code CoordinatorRecordType.fromId(type).newRecordKey()/newRecordValue()},
 * group-coordinator/src/main/resources/common/message/*.json), as the row the Python decoders give for it
 * (pipelines/decode.py decoded_row): the family's {@code value_version}, {@code is_tombstone} and the record's
 * {@code struct<key, value>} in that type's column of the family, returned as UnsafeRow bytes ({@link #RESULT}
 * says why) that {@code offsetlake_group_record_struct(record, 'type')} ({@link RecordStruct}) shows as that
 * column. The family's type comes from Python (pipelines/decode.py, the family's own columns), so the Spark
 * shape is never written twice.
 *
 * <p><b>Conversion.</b> Generic over that type: for each record type the Spark struct's fields are matched,
 * once per JVM, to the generated class's accessors by name (Spark's snake_case {@code member_epoch} = Kafka's
 * {@code memberEpoch()}), and a tree of small converters is built (strings to UTF8String, uuids to Kafka's
 * base64url text, lists of int32 to Catalyst's primitive arrays, other lists to arrays, nested structs to rows).
 * Chosen over a walk of the Jackson tree of Kafka's {@code <Name>JsonConverter.write} along the Spark type,
 * which took more than twice as long per record on bench/group_records_family.py's records (recorded in
 * CHANGELOG.md): the JSON tree costs an ObjectNode per struct and a node per number, and base64 for bytes
 * that must be decoded again; the accessors cost what the row costs. Method handles and
 * LambdaMetafactory-made getters timed the same; a quarter of the JFR samples are Spark's UTF-8 strings made
 * from Kafka's Java strings.
 * Building the converters checks the two layouts agree: every field of Kafka's class must have a Spark column
 * and every Spark column an accessor, except a tagged field newer than the shaded Kafka (none with Kafka
 * 4.3.1, the release the reference describes; with 4.2.1, 4.3's AssignmentTimestamp and consumer-group
 * AssignmentEpochs): then the Python reference's default, given by Python with the type, is what a record
 * without that tag decodes to, and a record carrying the tag has an unknown tagged field for Kafka's class,
 * so is left to Python.
 *
 * <p><b>Exactness</b> (OffsetCommitExpression's contract): null, and the Python decoders take the record, for
 * a record type the shaded Kafka does not know (9, ShareGroupPartitionMetadata, Kafka 4.0 only) or Python does
 * not route here, a value version outside the reference's (v0 for all of these), any unknown tagged field at
 * any depth, a key not read whole or holding U+FFFD (keys are non-flexible: int16 strings, fixed-width fields),
 * and a value that Kafka's classes would not write back byte for byte (every value here is flexible, and Kafka's
 * reader accepts non-minimal varints, a known tag's wrong declared size, a tag written with its default value,
 * invalid UTF-8 replaced by U+FFFD). That is checked by writing the value back when a known tagged field holds
 * other than Kafka's default, and otherwise by Kafka's size alone ({@link #sameSize} says why that suffices).
 * Any exception while parsing is null too.
 */
public final class GroupRecordExpression extends RecordDecodeExpression {
    private static final long serialVersionUID = 1L;
    public static final String NAME = "offsetlake_decode_group_record";
    private static final short KEY_VERSION = 0;
    private static final ThreadLocal<ByteBuffer> WRITE_BACK = ThreadLocal.withInitial(() -> ByteBuffer.allocate(1024));

    /** The record does not decode exactly: thrown inside the conversion, caught by the decode (no stack trace). */
    private static final RuntimeException NOT_EXACT = new RuntimeException("not exact", null, false, false) { };

    private final DataType type;
    private final String spec;
    private final Decoder decoder;

    /**
     * {@code type}: struct&lt;value_version: short, is_tombstone: boolean, &lt;record type name&gt;: struct&lt;key, value&gt;...&gt;;
     * {@code spec}: lines {@code versions <record> <low> <high>} (the value versions the Python reference reads)
     * and {@code tagged <record>.value.<field>[.<field>...] <json>} for every tagged field (the reference's
     * default: an integer, {@code []}, {@code null}, or {@code -} for another), tab-separated
     * (pipelines/decode.py _group_record_udf_spec).
     */
    public GroupRecordExpression(Expression key, Expression value, DataType type, String spec) {
        super(key, value);
        this.type = type;
        this.spec = spec;
        this.decoder = new Decoder((StructType) type, spec);
    }

    /**
     * Registers {@code offsetlake_decode_group_record(key, value)}, returning {@link #RESULT}, and
     * {@code offsetlake_group_record_struct(record, 'type name')}, the record's struct of that type's column in
     * {@code type}, in the session's function registry (idempotent).
     */
    public static void register(SparkSession session, DataType type, String spec) {
        new Decoder((StructType) type, spec).tables();  // fail at registration, not in a task, on a layout mismatch
        register(session, NAME, (key, value) -> new GroupRecordExpression(key, value, type, spec));
        register(session, RecordStruct.NAME, (record, name) -> {
            Object typeName = name.foldable() ? name.eval(null) : null;
            StructType family = (StructType) type;
            if (typeName == null || !family.getFieldIndex(typeName.toString()).isDefined()) {
                throw new IllegalArgumentException(RecordStruct.NAME + "(record, name): name must be a record type of "
                        + family.simpleString() + ", got " + name);
            }
            return new RecordStruct(record, NO_BYTES, family.apply(typeName.toString()).dataType());
        });
    }

    /**
     * What the decode returns: the value version, the tombstone flag, and the record's struct&lt;key, value&gt;
     * in Spark's own row format (UnsafeRow bytes), which {@link RecordStruct} shows as the struct of its type.
     * Why not one struct column per record type, as the family has (and as the first version of this class
     * returned): pipelines/decode.py's first stage decodes every record in one projection, and 157 more leaf
     * fields in its output took that projection over spark.sql.codegen.maxFields (100), out of whole-stage
     * code, and offset commits decoded markedly slower (bench/decode.py's spark_decode; recorded in
     * CHANGELOG.md). Three fields keep it narrow.
     */
    public static final StructType RESULT = new StructType()
            .add("value_version", DataTypes.ShortType).add("is_tombstone", DataTypes.BooleanType)
            .add("record", DataTypes.BinaryType);

    private static final Expression NO_BYTES = Literal.create(null, DataTypes.BinaryType);

    /** {@code offsetlake_group_record_struct(record, 'type')}: the decode's record bytes as that type's struct. */
    static final class RecordStruct extends RecordDecodeExpression {
        private static final long serialVersionUID = 1L;
        static final String NAME = "offsetlake_group_record_struct";
        private static final Decode VIEW = new Decode() {
            private static final long serialVersionUID = 1L;

            @Override
            public InternalRow apply(byte[] record, byte[] unused) {
                UnsafeRow row = new UnsafeRow(2);  // struct<key, value>
                row.pointTo(record, record.length);
                return row;
            }
        };
        private final DataType type;

        RecordStruct(Expression record, Expression unused, DataType type) {
            super(record, unused);
            this.type = type;
        }

        @Override
        String name() {
            return NAME;
        }

        @Override
        Decode decode() {
            return VIEW;
        }

        @Override
        RecordDecodeExpression withChildren(Expression record, Expression unused) {
            return new RecordStruct(record, unused, type);
        }

        @Override
        public DataType dataType() {
            return type;
        }
    }

    @Override
    String name() {
        return NAME;
    }

    @Override
    Decode decode() {
        return decoder;
    }

    @Override
    RecordDecodeExpression withChildren(Expression key, Expression value) {
        return new GroupRecordExpression(key, value, type, spec);
    }

    @Override
    public DataType dataType() {
        return RESULT;
    }

    /** The decode; serialized with the plan, its converters built once per JVM on first use. */
    static final class Decoder extends Decode {
        private static final long serialVersionUID = 1L;
        private final StructType type;
        private final String spec;
        private transient volatile RecordKind[] kinds;

        Decoder(StructType type, String spec) {
            this.type = type;
            this.spec = spec;
        }

        RecordKind[] tables() {
            RecordKind[] result = kinds;
            if (result == null) {
                result = kinds = build(type, spec);
            }
            return result;
        }

        @Override
        public InternalRow apply(byte[] key, byte[] value) {
            try {
                return decode(tables(), key, value);
            } catch (RuntimeException notExact) {
                return null;
            }
        }
    }

    /** One record type: Kafka's registry entry, its struct's Spark type, its converters. */
    private record RecordKind(CoordinatorRecordType kafka, StructType struct, StructConverter key, StructConverter value,
                              short lowVersion, short highVersion) { }

    /** Per task thread, per record type: the projection writing its struct as an UnsafeRow (it reuses a buffer). */
    private static final ThreadLocal<UnsafeProjection[]> TO_UNSAFE = ThreadLocal.withInitial(() -> new UnsafeProjection[64]);

    /** struct&lt;key, value&gt; in Spark's row format, copied out of the projection's reused buffer. */
    private static byte[] unsafeBytes(RecordKind kind, short id, Object keyRow, Object valueRow) {
        UnsafeProjection[] projections = TO_UNSAFE.get();
        UnsafeProjection projection = projections[id];
        if (projection == null) {
            projection = projections[id] = UnsafeProjection.create(kind.struct);
        }
        UnsafeRow row = projection.apply(new GenericInternalRow(new Object[] {keyRow, valueRow}));
        byte[] bytes = new byte[row.getSizeInBytes()];
        row.writeToMemory(bytes, Platform.BYTE_ARRAY_OFFSET);
        return bytes;
    }

    static InternalRow decode(RecordKind[] kinds, byte[] key, byte[] value) {
        if (key == null || key.length < 2) {
            return null;
        }
        ByteBuffer keyBuffer = ByteBuffer.wrap(key);
        short id = keyBuffer.getShort();
        RecordKind kind = id >= 0 && id < kinds.length ? kinds[id] : null;
        if (kind == null) {
            return null;
        }
        ApiMessage k = kind.kafka.newRecordKey();
        k.read(new CanonicalReader(keyBuffer), KEY_VERSION);  // Kafka's reads, strings without an extra copy
        if (keyBuffer.hasRemaining()) {
            return null;
        }
        boolean[] taggedValue = {false};
        Object keyRow = kind.key.convert(k, taggedValue);  // U+FFFD in a key string: not exact (non-flexible)
        if (value == null) {
            return new GenericInternalRow(new Object[] {null, true, unsafeBytes(kind, id, keyRow, null)});
        }
        if (value.length < 2) {
            return null;
        }
        ByteBuffer valueBuffer = ByteBuffer.wrap(value);
        short version = valueBuffer.getShort();
        if (version < kind.lowVersion || version > kind.highVersion) {
            return null;
        }
        ApiMessage v = kind.kafka.newRecordValue();
        v.read(new CanonicalReader(valueBuffer), version);
        if (valueBuffer.hasRemaining()) {
            return null;
        }
        Object valueRow = kind.value.convert(v, taggedValue);  // unknown tagged fields at any depth: not exact
        if (!(taggedValue[0] ? writesBack(v, value, version) : sameSize(v, value, version))) {
            return null;
        }
        return new GenericInternalRow(new Object[] {version, false, unsafeBytes(kind, id, keyRow, valueRow)});
    }

    /**
     * With no tagged field kept (none known but at Kafka's default, none unknown: Kafka writes every tag section
     * empty), Kafka's own size equal to the input's means the input is what Kafka writes, given a whole read and no
     * U+FFFD (OffsetCommitExpression's argument): every encoding Kafka's reader accepts for a value is at least as
     * long as the one Kafka writes, and longer when it differs (non-minimal varints; a tag written with its default
     * value or twice), save a nullable struct's int8 marker (any value &gt;= 0 is "present" for Kafka's reader and
     * for the reference alike, so the decode is the same).
     */
    private static boolean sameSize(Message message, byte[] bytes, short version) {
        return message.size(new ObjectSerializationCache(), version) == bytes.length - 2;
    }

    /**
     * Kafka's class writes the message back to exactly the bytes after the int16 version: for a record with a
     * known tagged field set, whose declared size Kafka's reader does not check.
     */
    private static boolean writesBack(Message message, byte[] bytes, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = message.size(cache, version);
        if (size != bytes.length - 2) {
            return false;
        }
        ByteBuffer out = WRITE_BACK.get();
        if (out.capacity() < size) {
            out = ByteBuffer.allocate(Math.max(size, 2 * out.capacity()));
            WRITE_BACK.set(out);
        }
        out.clear();
        message.write(new ByteBufferAccessor(out), cache, version);
        return Arrays.equals(out.array(), 0, size, bytes, 2, bytes.length);
    }

    // ------------------------------------------------------------------ building the converters

    private static RecordKind[] build(StructType type, String spec) {
        Map<String, short[]> versions = new HashMap<>();
        Map<String, String> defaults = new HashMap<>();  // every tagged field: its default as JSON, or "-"
        for (String line : spec.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            String[] parts = line.split("\t");
            if (parts[0].equals("versions") && parts.length == 4) {
                versions.put(parts[1], new short[] {Short.parseShort(parts[2]), Short.parseShort(parts[3])});
            } else if (parts[0].equals("tagged") && parts.length == 3) {
                defaults.put(parts[1], parts[2]);
            } else {
                throw new IllegalArgumentException(NAME + ": bad spec line '" + line + "'");
            }
        }
        StructField[] fields = type.fields();
        if (fields.length < 3 || !fields[0].name().equals("value_version") || !fields[1].name().equals("is_tombstone")) {
            throw new IllegalArgumentException(NAME + ": the type must start with value_version, is_tombstone: " + type);
        }
        RecordKind[] kinds = new RecordKind[0];
        for (int i = 2; i < fields.length; i++) {
            String name = fields[i].name();
            CoordinatorRecordType kafka;
            try {
                kafka = CoordinatorRecordType.valueOf(name.toUpperCase(java.util.Locale.ROOT));
            } catch (IllegalArgumentException unknownToThisKafka) {
                continue;  // e.g. share_group_partition_metadata (Kafka 4.0 only): always left to Python
            }
            short[] range = versions.get(name);
            if (range == null) {
                throw new IllegalArgumentException(NAME + ": no value versions given for " + name);
            }
            StructType record = (StructType) fields[i].dataType();
            StructConverter key = new StructConverter(kafka.newRecordKey().getClass(),
                    (StructType) record.apply("key").dataType(), name + ".key", defaults);
            StructConverter value = new StructConverter(kafka.newRecordValue().getClass(),
                    (StructType) record.apply("value").dataType(), name + ".value", defaults);
            if (kafka.id() >= kinds.length) {
                kinds = Arrays.copyOf(kinds, kafka.id() + 1);
            }
            if (kafka.id() >= 64) {
                throw new IllegalArgumentException(NAME + ": record type id " + kafka.id() + " above 63");
            }
            kinds[kafka.id()] = new RecordKind(kafka, record, key, value, range[0], range[1]);
        }
        return kinds;
    }

    /** A Kafka object (or null) to its Catalyst value. */
    private interface Converter {
        /** {@code taggedValue[0]} is set when a known tagged field holds other than Kafka's default. */
        Object convert(Object kafka, boolean[] taggedValue);
    }

    private static final Converter SAME = (kafka, taggedValue) -> kafka;

    private static final Converter STRING = (kafka, taggedValue) -> {
        if (kafka == null) {
            return null;
        }
        String s = (String) kafka;
        if (!OffsetCommitExpression.validUtf8(s)) {
            throw NOT_EXACT;
        }
        return UTF8String.fromString(s);
    };

    private static final java.util.Base64.Encoder BASE64URL = java.util.Base64.getUrlEncoder().withoutPadding();

    /** Kafka's Uuid.toString (base64url of the 16 bytes, no padding), straight to UTF-8: half the cost. */
    private static final Converter UUID_TEXT = (kafka, taggedValue) -> {
        if (kafka == null) {
            return null;
        }
        Uuid uuid = (Uuid) kafka;
        byte[] bytes = new byte[16];
        long most = uuid.getMostSignificantBits();
        long least = uuid.getLeastSignificantBits();
        for (int i = 0; i < 8; i++) {
            bytes[i] = (byte) (most >>> (56 - 8 * i));
            bytes[8 + i] = (byte) (least >>> (56 - 8 * i));
        }
        return UTF8String.fromBytes(BASE64URL.encode(bytes));
    };

    /** A list of int32 as Catalyst's own primitive array, which Spark copies whole into its rows. */
    private static final Converter INTS = (kafka, taggedValue) -> {
        if (kafka == null) {
            return null;
        }
        List<?> list = (List<?>) kafka;
        int[] ints = new int[list.size()];
        for (int i = 0; i < ints.length; i++) {
            ints[i] = (Integer) list.get(i);
        }
        return UnsafeArrayData.fromPrimitiveArray(ints);
    };

    /** A generated struct (a Message): one converter per Spark field, in the Spark struct's order. */
    private static final class StructConverter implements Converter {
        private final MethodHandle[] accessors;  // null where the field takes a constant (a tag newer than Kafka's)
        private final Object[] constants;
        private final Converter[] converters;
        private final Object[] kafkaDefaults;  // a tagged field's value in a new instance (Kafka omits it then)
        private final boolean[] tagged;

        StructConverter(Class<?> kafka, StructType type, String path, Map<String, String> defaults) {
            StructField[] fields = type.fields();
            accessors = new MethodHandle[fields.length];
            constants = new Object[fields.length];
            converters = new Converter[fields.length];
            kafkaDefaults = new Object[fields.length];
            tagged = new boolean[fields.length];
            Object fresh = newInstance(kafka);
            Set<String> names = new HashSet<>();
            for (int i = 0; i < fields.length; i++) {
                StructField field = fields[i];
                names.add(field.name());
                Method accessor = accessor(kafka, camelCase(field.name()));
                String where = path + "." + field.name();
                String json = defaults.get(where);
                if (accessor == null) {
                    if (json == null || json.equals("-")) {
                        throw new IllegalArgumentException(NAME + ": " + kafka.getName() + " has no field for " + where
                                + " and the reference gives no tagged default for it: the layouts differ");
                    }
                    constants[i] = constant(json, field.dataType(), where);
                    continue;
                }
                try {
                    accessors[i] = MethodHandles.publicLookup().unreflect(accessor)
                            .asType(MethodType.methodType(Object.class, Object.class));
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
                converters[i] = converter(accessor.getGenericReturnType(), field.dataType(), where, defaults);
                if (json != null) {
                    tagged[i] = true;
                    try {
                        kafkaDefaults[i] = (Object) accessors[i].invokeExact(fresh);
                    } catch (Throwable t) {
                        throw new IllegalStateException(t);
                    }
                }
            }
            for (java.lang.reflect.Field declared : kafka.getDeclaredFields()) {
                if (!Modifier.isStatic(declared.getModifiers()) && !declared.getName().startsWith("_")
                        && !names.contains(snakeCase(declared.getName()))) {
                    throw new IllegalArgumentException(NAME + ": " + kafka.getName() + "." + declared.getName()
                            + " has no column in " + path + ": the layouts differ");
                }
            }
        }

        @Override
        public Object convert(Object kafka, boolean[] taggedValue) {
            if (kafka == null) {
                return null;
            }
            if (!((Message) kafka).unknownTaggedFields().isEmpty()) {
                throw NOT_EXACT;
            }
            Object[] out = new Object[accessors.length];
            try {
                for (int i = 0; i < out.length; i++) {
                    MethodHandle accessor = accessors[i];
                    if (accessor == null) {
                        out[i] = constants[i];
                        continue;
                    }
                    Object raw = (Object) accessor.invokeExact(kafka);
                    if (tagged[i] && !java.util.Objects.equals(raw, kafkaDefaults[i])) {
                        taggedValue[0] = true;
                    }
                    out[i] = converters[i].convert(raw, taggedValue);
                }
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
            return new GenericInternalRow(out);
        }
    }

    private static final class ListConverter implements Converter {
        private final Converter element;

        ListConverter(Converter element) {
            this.element = element;
        }

        @Override
        public Object convert(Object kafka, boolean[] taggedValue) {
            if (kafka == null) {
                return null;
            }
            List<?> list = (List<?>) kafka;
            Object[] out = new Object[list.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = element.convert(list.get(i), taggedValue);
            }
            return new GenericArrayData(out);
        }
    }

    private static Converter converter(java.lang.reflect.Type java, DataType spark, String where,
                                       Map<String, String> defaults) {
        if (java instanceof ParameterizedType list && list.getRawType() == List.class && spark instanceof ArrayType array
                && list.getActualTypeArguments()[0] == Integer.class && array.elementType() instanceof IntegerType) {
            return INTS;
        }
        if (java instanceof ParameterizedType list && list.getRawType() == List.class && spark instanceof ArrayType array) {
            return new ListConverter(converter(list.getActualTypeArguments()[0], array.elementType(), where, defaults));
        }
        if (java instanceof Class<?> c) {
            if (spark instanceof StringType && c == String.class) {
                return STRING;
            }
            if (spark instanceof StringType && c == Uuid.class) {
                return UUID_TEXT;
            }
            if (spark instanceof BinaryType && c == byte[].class
                    || spark instanceof ByteType && (c == byte.class || c == Byte.class)
                    || spark instanceof ShortType && (c == short.class || c == Short.class)
                    || spark instanceof IntegerType && (c == int.class || c == Integer.class)  // int32, uint16
                    || spark instanceof LongType && (c == long.class || c == Long.class)
                    || spark instanceof BooleanType && (c == boolean.class || c == Boolean.class)) {
                return SAME;
            }
            if (spark instanceof StructType struct && Message.class.isAssignableFrom(c)) {
                return new StructConverter(c, struct, where, defaults);
            }
        }
        throw new IllegalArgumentException(NAME + ": cannot convert " + java.getTypeName() + " to " + spark.simpleString()
                + " at " + where);
    }

    private static Object constant(String json, DataType spark, String where) {
        if (json.equals("null")) {
            return null;
        }
        if (json.equals("[]") && spark instanceof ArrayType) {
            return new GenericArrayData(new Object[0]);
        }
        if (spark instanceof LongType) {
            return Long.parseLong(json);
        }
        if (spark instanceof IntegerType) {
            return Integer.parseInt(json);
        }
        if (spark instanceof ShortType) {
            return Short.parseShort(json);
        }
        if (spark instanceof ByteType) {
            return Byte.parseByte(json);
        }
        throw new IllegalArgumentException(NAME + ": unsupported default " + json + " for " + where);
    }

    private static Object newInstance(Class<?> kafka) {
        try {
            return kafka.getConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException(NAME + ": " + kafka.getName() + " has no public no-argument constructor", e);
        }
    }

    /** The generated accessor: public, no argument, named as Kafka's camelCase field. */
    private static Method accessor(Class<?> kafka, String name) {
        try {
            Method method = kafka.getMethod(name);
            return Modifier.isStatic(method.getModifiers()) || method.getReturnType() == void.class ? null : method;
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /** {@code member_epoch} to {@code memberEpoch} (Kafka's accessor name, FieldSpec.camelCaseName). */
    static String camelCase(String snake) {
        StringBuilder out = new StringBuilder(snake.length());
        boolean upper = false;
        for (int i = 0; i < snake.length(); i++) {
            char c = snake.charAt(i);
            if (c == '_') {
                upper = true;
            } else {
                out.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        return out.toString();
    }

    /** {@code memberEpoch} to {@code member_epoch}, as decoders.spec.snake_case does for these names. */
    static String snakeCase(String camel) {
        StringBuilder out = new StringBuilder(camel.length() + 4);
        for (int i = 0; i < camel.length(); i++) {
            char c = camel.charAt(i);
            if (Character.isUpperCase(c)) {
                if (i > 0 && !Character.isUpperCase(camel.charAt(i - 1))) {
                    out.append('_');
                }
                out.append(Character.toLowerCase(c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
