"""Lookups of attempts of unknown outcome back off per row (`llm.reconcile`): the failures in a
row, the time a pending row is due again (indexed with its state, replacing the index on
`checked_at` that only the old selection used), and the final state "lookup_failed"."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('llm', '0019_store_completions_and_reconciliation'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='callreconciliation',
            name='llm_reconcile_state',
        ),
        migrations.AddField(
            model_name='callreconciliation',
            name='failures',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='callreconciliation',
            name='next_check_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name='callreconciliation',
            name='state',
            field=models.CharField(choices=[('pending', 'Not reconciled yet'), ('reconciled', "Reconciled with the provider's records"), ('not_billed', 'Not billed (never answered)'), ('lookup_failed', 'Could not be reconciled: the provider could not be asked')], default='pending', max_length=16),
        ),
        migrations.AddIndex(
            model_name='callreconciliation',
            index=models.Index(fields=['state', 'next_check_at'], name='llm_reconcile_due'),
        ),
    ]
