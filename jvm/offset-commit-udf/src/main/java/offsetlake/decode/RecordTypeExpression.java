package offsetlake.decode;

import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark SQL function {@code offsetlake_record_type(key)}: the record type of a __consumer_offsets key,
 * its leading big-endian int16 (CoordinatorRecordSerde reads it the same way before choosing the key's
 * class), or null for a null key or one shorter than two bytes. pipelines/decode.py routes records to
 * their families by it.
 *
 * <p>A Catalyst expression whose generated code reads the two bytes in place. Not a Java UDF ({@code
 * UDF1<byte[], Short>}): for that, Spark's generated code calls two converters and the UDF through {@code
 * scala.Function1} per record and boxes the result, work of the same order as the record's whole scan on
 * the bench's commits. As SQL (conv(hex(substring(key, 1, 2)), 16, 10)) it cost more than decoding the
 * commit. Deterministic: the optimizer may move and dedupe it.
 */
public final class RecordTypeExpression extends Expression implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    public static final String NAME = "offsetlake_record_type";

    private final Expression key;
    private final Seq<Expression> children;

    public RecordTypeExpression(Expression key) {
        this.key = key;
        this.children = CollectionConverters.asScala(List.of(key)).toSeq();
    }

    /** Registers {@code offsetlake_record_type(key)} in the session's function registry (idempotent). */
    public static void register(SparkSession session) {
        RecordDecodeExpression.registerFunction(session, NAME, "(key)", 1,
                args -> new RecordTypeExpression(args.get(0)));
    }

    /** The key's leading big-endian int16, or null (the interpreted path; the generated code does the same). */
    static Short recordType(byte[] key) {
        if (key == null || key.length < 2) {
            return null;
        }
        return (short) (((key[0] & 0xff) << 8) | (key[1] & 0xff));
    }

    @Override
    public Seq<Expression> children() {
        return children;
    }

    @Override
    public DataType dataType() {
        return DataTypes.ShortType;
    }

    @Override
    public boolean nullable() {
        return true;
    }

    @Override
    public boolean foldable() {
        return key.foldable();
    }

    @Override
    public String prettyName() {
        return NAME;
    }

    @Override
    public Object eval(InternalRow input) {
        return recordType((byte[]) key.eval(input));
    }

    @Override
    public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
        ExprCode k = key.genCode(ctx);
        String code = k.code() + "\n"
                + "boolean " + ev.isNull() + " = " + k.isNull() + " || " + k.value() + ".length < 2;\n"
                + "short " + ev.value() + " = " + ev.isNull() + " ? (short) -1 : (short) (((" + k.value()
                + "[0] & 0xff) << 8) | (" + k.value() + "[1] & 0xff));\n";
        return RecordDecodeExpression.withCode(ev, code);
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
        return new RecordTypeExpression(newChildren.apply(0));
    }

    @Override
    public int productArity() {
        return 1;
    }

    @Override
    public Object productElement(int n) {
        if (n == 0) {
            return key;
        }
        throw new IndexOutOfBoundsException(Integer.toString(n));
    }

    @Override
    public boolean canEqual(Object other) {
        return other instanceof RecordTypeExpression;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof RecordTypeExpression that && key.equals(that.key);
    }

    @Override
    public int hashCode() {
        return 31 * key.hashCode() + getClass().hashCode();
    }
}
