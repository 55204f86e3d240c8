package offsetlake.decode;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.generated.LegacyOffsetCommitKey;
import org.apache.kafka.coordinator.group.generated.LegacyOffsetCommitValue;
import org.apache.kafka.coordinator.group.generated.OffsetCommitKey;
import org.apache.kafka.coordinator.group.generated.OffsetCommitValue;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Spark SQL function {@code offsetlake_decode_offset_commit(key, value)}: an offset-commit record's
 * raw key and value, decoded by Kafka's own generated classes (OffsetCommitKey/Value,
 * LegacyOffsetCommitKey/Value; group-coordinator/src/main/resources/common/message/*.json), as the
 * flat struct of offsetlake's offset-commit family (schemas/decoded_records.py OFFSET_COMMIT_FIELDS,
 * then value_version and is_tombstone).
 *
 * <p>Null for any record it does not decode exactly; the Python decoders (the reference, which name
 * the precise quarantine reason) take those: an unknown type or version, a legacy record with a
 * value other than v0, unknown tagged fields, and anything whose bytes Kafka's classes would not
 * write back identically (trailing bytes, invalid UTF-8 that Java would replace, non-minimal
 * varints, a tagged field whose declared size is not what Kafka reads). That round trip is what makes
 * "identical to the Python decoder" hold without a second decoder here.
 *
 * <p>How the round trip is checked depends on the version (writing every record back cost about twice
 * Kafka's parse, most of the decode). A non-flexible version (every key; legacy values;
 * OffsetCommitValue v0-v3) has only fixed-width fields and int16-length strings, so a message that
 * Kafka's reader took whole ({@link #readWhole}: nothing left in the buffer) writes back to the same
 * bytes exactly when each string was valid UTF-8; Java's decoder ({@code Readable.readString}: {@code
 * new String(bytes, UTF_8)}) turns every malformed sequence into U+FFFD, so a string without U+FFFD was
 * valid (a string that really holds U+FFFD is left to Python too: slower, same result). A flexible
 * version (OffsetCommitValue v4+, {@code "flexibleVersions": "4+"} in OffsetCommitValue.json) has
 * varints and tagged fields whose non-canonical encodings the reader accepts silently (it reads a
 * known tag's value without checking the tag's declared size); {@link CanonicalReader} watches those
 * reads as Kafka's reader makes them (each varint minimal, the topic id's declared size 16, no tag
 * written with its default value or twice), which proves the same without writing anything (see
 * {@link #decode}). Writing back each record with a topic id and checking the others against Kafka's
 * {@code size()} took about half of the JVM decode of the bench's commits (recorded in CHANGELOG.md).
 *
 * <p>A Catalyst expression, not a UDF: {@link RecordDecodeExpression} says why. Registered by
 * {@link #register}, called from pipelines/decode.py. Kafka's classes are shaded (Spark's Kafka source
 * pins clients 3.9.1).
 */
public final class OffsetCommitExpression extends RecordDecodeExpression {
    private static final long serialVersionUID = 1L;
    public static final String NAME = "offsetlake_decode_offset_commit";
    private static final short KEY_VERSION = 0;
    private static final int TOPIC_IDS_REMEMBERED = 100_000;
    /** OffsetCommitValue.json: "flexibleVersions": "4+" (compact strings and tagged fields from v4). */
    private static final short FIRST_FLEXIBLE_VALUE_VERSION = 4;

    /** The result's fields, in the order of schemas/decoded_records.py (a test compares the two). */
    public static final StructType TYPE = new StructType()
            .add("group", DataTypes.StringType).add("topic", DataTypes.StringType)
            .add("partition", DataTypes.IntegerType).add("offset", DataTypes.LongType)
            .add("leader_epoch", DataTypes.IntegerType).add("metadata", DataTypes.StringType)
            .add("commit_timestamp", DataTypes.LongType).add("expire_timestamp", DataTypes.LongType)
            .add("topic_id", DataTypes.StringType).add("value_version", DataTypes.ShortType)
            .add("is_tombstone", DataTypes.BooleanType);
    private static final int GROUP = 0;
    private static final int TOPIC = 1;
    private static final int PARTITION = 2;
    private static final int OFFSET = 3;
    private static final int LEADER_EPOCH = 4;
    private static final int METADATA = 5;
    private static final int COMMIT_TIMESTAMP = 6;
    private static final int EXPIRE_TIMESTAMP = 7;
    private static final int TOPIC_ID = 8;
    private static final int VALUE_VERSION = 9;
    private static final int IS_TOMBSTONE = 10;
    private static final int FIELDS = 11;
    /** Room for the variable-length part (group, topic, metadata, topic id) of a typical commit; it grows if needed. */
    private static final int ROW_BYTES = 96;

    /** This call's decode, with its own scratch (see {@link CommitDecode}): one per expression, never shared. */
    private final CommitDecode decode = new CommitDecode();

    public OffsetCommitExpression(Expression key, Expression value) {
        super(key, value);
    }

    /** Registers the function in the session's function registry (idempotent). */
    public static void register(SparkSession session) {
        register(session, NAME, OffsetCommitExpression::new);
    }

    @Override
    String name() {
        return NAME;
    }

    @Override
    Decode decode() {
        return decode;
    }

    @Override
    RecordDecodeExpression withChildren(Expression key, Expression value) {
        return new OffsetCommitExpression(key, value);
    }

    @Override
    public DataType dataType() {
        return TYPE;
    }

    /**
     * The decode of one call of the function in a plan: its scratch (readers, messages, row writer) is its
     * own, and the row it returns is the writer's, valid until this call decodes the next record.
     *
     * <p>Why that is safe without a copy per record: it is Spark's own contract for the values an
     * expression returns. A struct read from an input row is an UnsafeRow over that row's bytes, which the
     * operator below overwrites with the next record; so whatever keeps a value past the row copies it
     * (UnsafeProjection writes its bytes; generated mutable projections call {@code copy()} on a struct,
     * CodeGenerator.setColumn; interpreted ones too, InternalRow.getWriter; collect_list
     * InternalRow.copyValue). What the contract does not cover is two calls sharing a writer within one
     * row: {@code SELECT f(k1, v1), f(k2, v2)} evaluates both before writing either. Hence one scratch per
     * call (per expression; Catalyst makes a new one for new children, {@link #withChildren}), not one per
     * thread with each row copied out at its exact size: that copy was about a sixth of the decode's samples
     * in a JFR profile of bench/decode.py's commits.
     *
     * <p>Spark deserializes a task's plan for the task, so one thread runs a call's decode; should two
     * ever share it, a thread that is not the scratch's owner takes a scratch of its own ({@link Owned}:
     * the thread and its scratch published together, final fields), so a row is never written by two.
     */
    private static final class CommitDecode extends Decode {
        private static final long serialVersionUID = 1L;
        private transient Owned owned;

        @Override
        public InternalRow apply(byte[] key, byte[] value) {
            Owned mine = owned;
            Thread thread = Thread.currentThread();
            if (mine == null || mine.thread != thread) {
                mine = new Owned(thread, new Scratch());
                owned = mine;
            }
            try {
                return decode(mine.scratch, key, value);
            } catch (RuntimeException notExact) {
                return null;
            }
        }
    }

    /** A scratch and the one thread that uses it. */
    private record Owned(Thread thread, Scratch scratch) {
    }

    static InternalRow decode(Scratch scratch, byte[] key, byte[] value) {
        if (key == null || key.length < 2) {
            return null;
        }
        // Spark's strings are taken over the record's own bytes once known valid (CanonicalReader.utf8).
        CanonicalReader keyReader = scratch.key.read(key);
        short type = keyReader.readShort();
        String group;
        String topic;
        int partition;
        if (type == 1) {
            OffsetCommitKey k = scratch.commitKey;
            k.read(keyReader, KEY_VERSION);
            group = k.group();
            topic = k.topic();
            partition = k.partition();
        } else if (type == 0) {
            LegacyOffsetCommitKey k = scratch.legacyKey;
            k.read(keyReader, KEY_VERSION);
            group = k.group();
            topic = k.topic();
            partition = k.partition();
        } else {
            return null;
        }
        if (!readWhole(keyReader.bytes(), group, topic)) {
            return null;
        }
        UnsafeRowWriter row = scratch.row;
        if (value == null) {
            keyColumns(row, keyReader, group, topic, partition);
            for (int field = OFFSET; field <= VALUE_VERSION; field++) {
                row.setNullAt(field);
            }
            row.write(IS_TOMBSTONE, true);
            return row.getRow();
        }
        if (value.length < 2) {
            return null;
        }
        CanonicalReader reader = scratch.value.read(value);
        short version = reader.readShort();
        if (type == 0) {
            if (version != 0) {
                return null;  // LegacyOffsetCommitValue.json: "validVersions": "0"
            }
            LegacyOffsetCommitValue v = scratch.legacyValue;
            v.read(reader, version);
            if (!readWhole(reader.bytes(), v.metadata())) {
                return null;
            }
            keyColumns(row, keyReader, group, topic, partition);
            row.write(OFFSET, v.offset());
            row.setNullAt(LEADER_EPOCH);
            reader.writeUtf8(row, METADATA, v.metadata());
            row.write(COMMIT_TIMESTAMP, v.commitTimestamp());
            row.setNullAt(EXPIRE_TIMESTAMP);
            row.setNullAt(TOPIC_ID);
            row.write(VALUE_VERSION, version);
            row.write(IS_TOMBSTONE, false);
            return row.getRow();
        }
        if (version < 0 || version > OffsetCommitValue.HIGHEST_SUPPORTED_VERSION) {
            return null;
        }
        OffsetCommitValue v = scratch.commitValue;
        v.read(reader, version);
        boolean exact;
        if (version < FIRST_FLEXIBLE_VALUE_VERSION) {
            exact = readWhole(reader.bytes(), v.metadata());
        } else if (reader.unknownTaggedFields() > 0) {
            exact = false;
        } else {
            // Kafka writes an empty tag section, or the topic id's tag (0, size 16, the uuid) when it is
            // set, and every varint minimal. Read whole (metadata valid UTF-8), each varint minimal, and
            // exactly the uuids Kafka would write, each with the declared size 16, means the input was
            // Kafka's own encoding (CanonicalReader says why that is enough): a topic id tag written
            // with its default value, twice, or declaring another size would have been seen reading it.
            int uuids = Uuid.ZERO_UUID.equals(v.topicId()) ? 0 : 1;
            exact = readWhole(reader.bytes(), v.metadata()) && reader.canonical() && reader.uuidsRead() == uuids
                    && reader.uuidsTagSized() == uuids;
        }
        if (!exact) {
            return null;
        }
        keyColumns(row, keyReader, group, topic, partition);
        row.write(OFFSET, v.offset());
        if (version >= 3) {  // added in v3 (KIP-320)
            row.write(LEADER_EPOCH, v.leaderEpoch());
        } else {
            row.setNullAt(LEADER_EPOCH);
        }
        reader.writeUtf8(row, METADATA, v.metadata());
        row.write(COMMIT_TIMESTAMP, v.commitTimestamp());
        if (version == 1) {  // only v1 carries it
            row.write(EXPIRE_TIMESTAMP, v.expireTimestamp());
        } else {
            row.setNullAt(EXPIRE_TIMESTAMP);
        }
        // v4 (Kafka 4.1+) tags the topic id; the zero uuid is the tag's default, i.e. no id written.
        if (version >= 4 && !Uuid.ZERO_UUID.equals(v.topicId())) {
            row.write(TOPIC_ID, topicIdText(scratch.topicIds, v.topicId()));
        } else {
            row.setNullAt(TOPIC_ID);
        }
        row.write(VALUE_VERSION, version);
        row.write(IS_TOMBSTONE, false);
        return row.getRow();
    }

    /**
     * What a call decodes its commits with, one record after another ({@link CommitDecode}): the readers,
     * Kafka's messages ({@code read} sets every field of a generated message, tagged fields' defaults
     * included, so one serves every record), a row writer whose row is returned, and the topic ids' text.
     * Why reuse: see {@link CanonicalReader.Reused}.
     */
    private static final class Scratch {
        final CanonicalReader.Reused key = new CanonicalReader.Reused(true);
        final CanonicalReader.Reused value = new CanonicalReader.Reused(true);
        final OffsetCommitKey commitKey = new OffsetCommitKey();
        final LegacyOffsetCommitKey legacyKey = new LegacyOffsetCommitKey();
        final OffsetCommitValue commitValue = new OffsetCommitValue();
        final LegacyOffsetCommitValue legacyValue = new LegacyOffsetCommitValue();
        final UnsafeRowWriter row = new UnsafeRowWriter(FIELDS, ROW_BYTES);
        final Map<Uuid, UTF8String> topicIds = new HashMap<>();
    }

    /**
     * {@code row} reset, with the key's columns written: Spark's binary row format (UnsafeRow), the
     * strings copied from the record's own bytes. Why not a GenericInternalRow of UTF8Strings: a
     * UTF8String of Spark 4.1 initialises four volatile fields (numChars, isValid, numBytesValid,
     * isFullAscii), a store fence each, and a commit's three strings cost more than the row and the checks
     * together (recorded in CHANGELOG.md).
     */
    private static void keyColumns(UnsafeRowWriter row, CanonicalReader keyReader, String group, String topic,
                                   int partition) {
        row.reset();  // the cursor back to the row's start (a top-level row; resetRowWriter is for nested ones)
        row.zeroOutNullBytes();
        keyReader.writeUtf8(row, GROUP, group);
        keyReader.writeUtf8(row, TOPIC, topic);
        row.write(PARTITION, partition);
    }

    /**
     * Kafka's text of a topic id ({@code Uuid.toString}: base64url, no padding), remembered in {@code
     * known} (a call's scratch): a cluster has one id per topic and every commit of a topic repeats it,
     * and encoding it anew cost more than the rest of such a commit's decode.
     * Bounded: emptied when it holds {@link #TOPIC_IDS_REMEMBERED} ids.
     */
    private static UTF8String topicIdText(Map<Uuid, UTF8String> known, Uuid id) {
        UTF8String text = known.get(id);
        if (text == null) {
            if (known.size() >= TOPIC_IDS_REMEMBERED) {
                known.clear();
            }
            text = UTF8String.fromString(id.toString());
            known.put(id, text);
        }
        return text;
    }

    /**
     * A message of a non-flexible version writes back to its bytes exactly: Kafka's reader left nothing
     * in {@code read} and its strings are valid UTF-8 ({@link #validUtf8}; the class comment says why that
     * suffices). The strings are the non-null ones the reader returned (CanonicalReader's stand-ins for
     * ASCII strings hold no U+FFFD: ASCII is valid UTF-8).
     */
    static boolean readWhole(ByteBuffer read, String string) {
        return !read.hasRemaining() && validUtf8(string);
    }

    /** {@link #readWhole(ByteBuffer, String)} for two strings, without a varargs array per record. */
    static boolean readWhole(ByteBuffer read, String first, String second) {
        return readWhole(read, first) && validUtf8(second);
    }

    /**
     * A string (or null) Kafka's reader returned was valid UTF-8 on the wire: it holds no U+FFFD, the
     * character Java's decoder ({@code new String(bytes, UTF_8)}) puts in place of bytes that were not. A
     * string that really held U+FFFD is taken for invalid too: the Python decoders then decode it, slower,
     * to the same result. The one check every JVM decode here makes of Kafka's strings.
     */
    static boolean validUtf8(String string) {
        return string == null || string.indexOf('\uFFFD') < 0;
    }

}
